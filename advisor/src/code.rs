//! The code of a finding as a type: one variant per rule, written `WW101` in every output
//! format and read back from it, so no consumer compares a finding's code as text.

use serde::{Deserialize, Serialize};

/// Declares [`Code`] and the list of its variants from one list of names, so the list and
/// the enum cannot drift apart.
macro_rules! codes {
    ($($code:ident),+ $(,)?) => {
        /// A finding's code; `WW0xx` are notes, `WW1xx` loop findings, `WW2xx` kernel
        /// findings (see the rule modules for each one's meaning).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Code {
            $($code),+
        }

        impl Code {
            /// Every code, in code order.
            pub const EVERY: &'static [Code] = &[$(Code::$code),+];

            /// `WW101`, as reports, SARIF and `warpwise explain` write it.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code)),+
                }
            }
        }
    };
}

codes!(
    WW001, WW101, WW102, WW103, WW104, WW105, WW106, WW107, WW108, WW110, WW111, WW112, WW120,
    WW130, WW201, WW202, WW203,
);

impl Code {
    /// The code `text` names, in any case and with surrounding blanks (`ww101 `), if it is
    /// one.
    pub fn parse(text: &str) -> Option<Code> {
        let text = text.trim();
        Code::EVERY
            .iter()
            .copied()
            .find(|c| c.as_str().eq_ignore_ascii_case(text))
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    fn check(text: &str, expected: Option<Code>) {
        assert_eq!(Code::parse(text), expected, "{text:?}");
    }

    #[test]
    fn a_code_is_read_in_any_case_and_nothing_else_is() {
        check("WW101", Some(Code::WW101));
        check(" ww202\n", Some(Code::WW202));
        check("WW1010", None);
        check("WW109", None);
        check("", None);
    }

    #[test]
    fn every_code_has_exactly_one_rule_and_every_rule_a_distinct_code() {
        let rules: Vec<Code> = crate::rules::every().map(|r| r.code).collect();
        for code in Code::EVERY {
            let n = rules.iter().filter(|c| *c == code).count();
            assert_eq!(n, 1, "{code} has {n} rules");
        }
        assert_eq!(rules.len(), Code::EVERY.len());
    }

    #[test]
    fn reports_write_a_code_as_its_name() {
        assert_eq!(serde_json::to_string(&Code::WW110).unwrap(), "\"WW110\"");
        let read: Code = serde_yaml::from_str("WW130").unwrap();
        assert_eq!(read, Code::WW130);
        assert!(serde_yaml::from_str::<Code>("WW999").is_err());
    }
}
