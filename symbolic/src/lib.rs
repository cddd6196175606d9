//! Symbolic expressions over the rationals (thesis §7): normal form, signs, monotonicity, solving.
