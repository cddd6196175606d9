//! An interpreter for the CDFG: runs a lowered [`Program`] on concrete inputs so that the
//! lowering (and the analyses built on it) can be checked against real executions.
//!
//! Memory is a set of byte-addressed allocations (slots, globals, heap blocks, string
//! literals, and one empty allocation per function so function pointers have an address).
//! A pointer stored to memory is encoded in its 8 bytes as `alloc << 40 | offset` (offset in
//! two's complement over 40 bits), so that aggregates holding pointers can be copied as
//! plain bytes and still be loaded back as pointers; allocation 0 is the null pointer.

use crate::ir::{
    BinOp, Block, Callee, Constant, Function, GlobalId, InstKind, Program, Terminator, UnOp, Value,
};
use crate::types::{FloatKind, IntRank, Type, TypeId};
use std::collections::HashMap;
use std::fmt;

/// A run-time value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    /// An integer, already wrapped to the width and signedness of its type.
    Int(i128),
    Float(f64),
    Ptr {
        alloc: u32,
        offset: i64,
    },
    FnPtr(String),
    /// A struct or union value (loaded, passed or returned by value), as its bytes.
    Agg(Vec<u8>),
    Undef,
}

impl Val {
    pub const NULL: Val = Val::Ptr {
        alloc: 0,
        offset: 0,
    };

    pub fn as_int(&self) -> Option<i128> {
        match self {
            Val::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_float(&self) -> Option<f64> {
        match self {
            Val::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// Why a run stopped without finishing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpError {
    pub message: String,
    /// The function executing when it happened.
    pub function: Option<String>,
}

impl fmt::Display for InterpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.function {
            Some(func) => write!(f, "in `{func}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for InterpError {}

/// What a run of `main` produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunResult {
    /// As `main` returned it or as passed to `exit` (the OS keeps only the low 8 bits).
    pub exit_code: i32,
    pub stdout: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocKind {
    Slot,
    Global,
    Heap,
    String,
    Function,
}

/// One memory access, reported to an [`Observer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access<'a> {
    /// The `Load`, `Store` or (for `memcpy`/`memset`) `Call` instruction.
    pub inst: Value,
    pub function: &'a str,
    pub alloc: u32,
    pub offset: i64,
    pub size: u64,
    pub is_store: bool,
}

/// Hooks for tests and dynamic analyses. To read results back after a run, keep them
/// behind an `Rc<RefCell<_>>` shared with the observer.
pub trait Observer {
    fn on_access(&mut self, _access: &Access) {}
    /// Called each time control enters a block (including the entry block).
    fn on_block(&mut self, _function: &str, _block: Block) {}
    /// Called with the result of every instruction (phis included) as it is computed.
    fn on_value(&mut self, _function: &str, _value: Value, _val: &Val) {}
}

struct Alloc {
    bytes: Vec<u8>,
    kind: AllocKind,
    live: bool,
    name: String,
}

enum Stop {
    Error(String),
    Exit(i32),
}

type R<T> = Result<T, Stop>;

fn fail<T>(message: impl Into<String>) -> R<T> {
    Err(Stop::Error(message.into()))
}

const OFFSET_BITS: u32 = 40;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

fn encode_ptr(alloc: u32, offset: i64) -> u64 {
    (u64::from(alloc) << OFFSET_BITS) | (offset as u64 & OFFSET_MASK)
}

fn decode_ptr(bits: u64) -> Val {
    let alloc = (bits >> OFFSET_BITS) as u32;
    let raw = bits & OFFSET_MASK;
    // Sign-extend the 40-bit offset.
    let offset = ((raw << (64 - OFFSET_BITS)) as i64) >> (64 - OFFSET_BITS);
    Val::Ptr { alloc, offset }
}

fn wrap(value: i128, bits: u32, signed: bool) -> i128 {
    if bits >= 128 {
        return value;
    }
    let mask = (1i128 << bits) - 1;
    let v = value & mask;
    if signed && v >> (bits - 1) & 1 == 1 {
        v - (1i128 << bits)
    } else {
        v
    }
}

/// Executes functions of one program. Memory persists across calls, so a test can allocate
/// arrays, call a kernel, and read the arrays back.
pub struct Interpreter<'p> {
    program: &'p Program,
    allocs: Vec<Alloc>,
    globals: HashMap<GlobalId, u32>,
    strings: HashMap<String, u32>,
    functions: HashMap<String, u32>,
    fuel: u64,
    max_depth: usize,
    depth: usize,
    observer: Option<Box<dyn Observer + 'p>>,
    stdout: String,
    block_counts: HashMap<(String, Block), u64>,
    /// The first failure of a global's initializer, reported by the next call.
    init_error: Option<InterpError>,
}

impl fmt::Debug for Interpreter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interpreter")
            .field("allocations", &self.allocs.len())
            .field("fuel", &self.fuel)
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

struct Frame<'f> {
    func: &'f Function,
    vals: Vec<Val>,
    slots: Vec<Option<(u32, u64)>>,
}

impl<'p> Interpreter<'p> {
    /// Sets up memory: one allocation per global, initialized as declared.
    pub fn new(program: &'p Program) -> Self {
        let mut interp = Interpreter {
            program,
            allocs: vec![Alloc {
                bytes: Vec::new(),
                kind: AllocKind::Global,
                live: false,
                name: "null".into(),
            }],
            globals: HashMap::new(),
            strings: HashMap::new(),
            functions: HashMap::new(),
            fuel: 100_000_000,
            max_depth: 400,
            depth: 0,
            observer: None,
            stdout: String::new(),
            block_counts: HashMap::new(),
            init_error: None,
        };
        for (i, g) in program.globals.iter().enumerate() {
            let size = program.types.size_of(g.ty).unwrap_or(0) as usize;
            let id = interp.new_alloc(vec![0; size], AllocKind::Global, &g.name);
            interp.globals.insert(GlobalId(i as u32), id);
        }
        for g in &program.globals {
            if g.values_elided {
                interp.init_error.get_or_insert(InterpError {
                    message: format!(
                        "the values of the table `{}` were left out of the parse (over {} bytes of numbers): it cannot be run",
                        g.name,
                        crate::tables::MIN_TABLE_BYTES
                    ),
                    function: None,
                });
                continue;
            }
            if let Some(init) = &g.init {
                if let Err(stop) = interp.call_function(init, Vec::new()) {
                    interp
                        .init_error
                        .get_or_insert(interp.error(stop, Some(&init.name)));
                }
            }
        }
        interp
    }

    /// Limits the number of instructions executed (default 100 million).
    pub fn with_fuel(mut self, fuel: u64) -> Self {
        self.fuel = fuel;
        self
    }

    /// Limits the call depth (default 400).
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    pub fn with_observer(mut self, observer: Box<dyn Observer + 'p>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Instructions left before the run is stopped.
    pub fn fuel_left(&self) -> u64 {
        self.fuel
    }

    /// Text written by `printf`, `puts` and `putchar` so far.
    pub fn stdout(&self) -> &str {
        &self.stdout
    }

    /// How many times control entered `block` of `function`.
    pub fn block_count(&self, function: &str, block: Block) -> u64 {
        self.block_counts
            .get(&(function.to_string(), block))
            .copied()
            .unwrap_or(0)
    }

    /// The allocation of a global variable, by name.
    pub fn global_ptr(&self, name: &str) -> Option<Val> {
        let index = self.program.globals.iter().position(|g| g.name == name)?;
        Some(Val::Ptr {
            alloc: self.globals[&GlobalId(index as u32)],
            offset: 0,
        })
    }

    /// The kind and name (variable, function or literal) of an allocation.
    pub fn alloc_info(&self, alloc: u32) -> Option<(AllocKind, &str)> {
        self.allocs
            .get(alloc as usize)
            .map(|a| (a.kind, a.name.as_str()))
    }

    /// A fresh zeroed heap allocation of `size` bytes.
    pub fn alloc_bytes(&mut self, size: usize) -> Val {
        let alloc = self.new_alloc(vec![0; size], AllocKind::Heap, "heap");
        Val::Ptr { alloc, offset: 0 }
    }

    pub fn alloc_i32s(&mut self, values: &[i32]) -> Val {
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let alloc = self.new_alloc(bytes, AllocKind::Heap, "heap");
        Val::Ptr { alloc, offset: 0 }
    }

    pub fn alloc_f32s(&mut self, values: &[f32]) -> Val {
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let alloc = self.new_alloc(bytes, AllocKind::Heap, "heap");
        Val::Ptr { alloc, offset: 0 }
    }

    pub fn alloc_f64s(&mut self, values: &[f64]) -> Val {
        let bytes = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let alloc = self.new_alloc(bytes, AllocKind::Heap, "heap");
        Val::Ptr { alloc, offset: 0 }
    }

    /// `len` bytes at `ptr`.
    pub fn read_bytes(&self, ptr: &Val, len: usize) -> Result<Vec<u8>, InterpError> {
        let (alloc, offset) = self.address(ptr).map_err(|s| self.error(s, None))?;
        self.bytes(alloc, offset, len as u64)
            .map(<[u8]>::to_vec)
            .map_err(|s| self.error(s, None))
    }

    pub fn read_i32s(&self, ptr: &Val, count: usize) -> Result<Vec<i32>, InterpError> {
        let b = self.read_bytes(ptr, count * 4)?;
        Ok(b.chunks(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
            .collect())
    }

    pub fn read_f32s(&self, ptr: &Val, count: usize) -> Result<Vec<f32>, InterpError> {
        let b = self.read_bytes(ptr, count * 4)?;
        Ok(b.chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4])))
            .collect())
    }

    pub fn read_f64s(&self, ptr: &Val, count: usize) -> Result<Vec<f64>, InterpError> {
        let b = self.read_bytes(ptr, count * 8)?;
        Ok(b.chunks(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }

    /// Runs `main` with `argv[0] = "prog"` followed by `args`.
    pub fn run_main(&mut self, args: &[&str]) -> Result<RunResult, InterpError> {
        if let Some(e) = self.init_error.take() {
            return Err(e);
        }
        let Some(main) = self.program.function("main") else {
            return Err(self.error(Stop::Error("no function `main`".into()), None));
        };
        let mut call_args = Vec::new();
        if !main.params.is_empty() {
            let mut pointers = Vec::new();
            for arg in std::iter::once("prog").chain(args.iter().copied()) {
                let mut bytes = arg.as_bytes().to_vec();
                bytes.push(0);
                let alloc = self.new_alloc(bytes, AllocKind::String, arg);
                pointers.extend(encode_ptr(alloc, 0).to_le_bytes());
            }
            pointers.extend([0; 8]);
            let argv = self.new_alloc(pointers, AllocKind::Heap, "argv");
            call_args.push(Val::Int(args.len() as i128 + 1));
            call_args.push(Val::Ptr {
                alloc: argv,
                offset: 0,
            });
        }
        let exit_code = match self.call_function(main, call_args) {
            Ok(Val::Int(code)) => code as i32,
            Ok(_) => 0,
            Err(Stop::Exit(code)) => code,
            Err(stop) => return Err(self.error(stop, Some("main"))),
        };
        Ok(RunResult {
            exit_code,
            stdout: self.stdout.clone(),
        })
    }

    /// Calls a function of the program (or a supported library function) with `args`.
    pub fn call(&mut self, function: &str, args: Vec<Val>) -> Result<Val, InterpError> {
        if let Some(e) = self.init_error.take() {
            return Err(e);
        }
        let result = match self.program.function(function) {
            Some(f) => self.call_function(f, args),
            None => self.call_library(function, &args, None, Value(0), ""),
        };
        result.map_err(|stop| self.error(stop, Some(function)))
    }

    fn error(&self, stop: Stop, function: Option<&str>) -> InterpError {
        match stop {
            Stop::Error(message) => InterpError {
                message,
                function: function.map(str::to_string),
            },
            Stop::Exit(code) => InterpError {
                message: format!("exit({code})"),
                function: function.map(str::to_string),
            },
        }
    }

    fn new_alloc(&mut self, bytes: Vec<u8>, kind: AllocKind, name: &str) -> u32 {
        self.allocs.push(Alloc {
            bytes,
            kind,
            live: true,
            name: name.to_string(),
        });
        self.allocs.len() as u32 - 1
    }

    fn string_ptr(&mut self, text: &str) -> Val {
        if let Some(&alloc) = self.strings.get(text) {
            return Val::Ptr { alloc, offset: 0 };
        }
        let mut bytes = unescape_literal(text);
        bytes.push(0);
        let alloc = self.new_alloc(bytes, AllocKind::String, text);
        self.strings.insert(text.to_string(), alloc);
        Val::Ptr { alloc, offset: 0 }
    }

    fn function_alloc(&mut self, name: &str) -> u32 {
        if let Some(&a) = self.functions.get(name) {
            return a;
        }
        let a = self.new_alloc(Vec::new(), AllocKind::Function, name);
        self.functions.insert(name.to_string(), a);
        a
    }

    fn address(&self, v: &Val) -> R<(u32, i64)> {
        match v {
            Val::Ptr { alloc: 0, .. } => fail("null pointer dereference"),
            Val::Ptr { alloc, offset } => Ok((*alloc, *offset)),
            Val::Int(0) => fail("null pointer dereference"),
            Val::Int(i) => match decode_ptr(*i as u64) {
                Val::Ptr { alloc, offset } if alloc != 0 => Ok((alloc, offset)),
                _ => fail(format!("integer {i} used as an address")),
            },
            Val::Undef => fail("use of an undefined value as an address"),
            other => fail(format!("{other:?} used as an address")),
        }
    }

    fn check(&self, alloc: u32, offset: i64, size: u64) -> R<usize> {
        let Some(a) = self.allocs.get(alloc as usize) else {
            return fail(format!("no allocation {alloc}"));
        };
        if !a.live {
            return fail(format!("access to `{}` after its lifetime", a.name));
        }
        let end = offset.checked_add(size as i64);
        if offset < 0 || end.is_none_or(|e| e as u64 > a.bytes.len() as u64) {
            return fail(format!(
                "out-of-bounds access to `{}` ({} bytes) at offset {offset}, size {size}",
                a.name,
                a.bytes.len()
            ));
        }
        Ok(offset as usize)
    }

    fn bytes(&self, alloc: u32, offset: i64, size: u64) -> R<&[u8]> {
        let start = self.check(alloc, offset, size)?;
        Ok(&self.allocs[alloc as usize].bytes[start..start + size as usize])
    }

    fn bytes_mut(&mut self, alloc: u32, offset: i64, size: u64) -> R<&mut [u8]> {
        let start = self.check(alloc, offset, size)?;
        Ok(&mut self.allocs[alloc as usize].bytes[start..start + size as usize])
    }

    fn int_info(&self, ty: TypeId) -> Option<(u32, bool)> {
        match self.program.types.get(ty) {
            Type::Int { rank, signed } => Some((
                match rank {
                    IntRank::Bool | IntRank::Char => 8,
                    IntRank::Short => 16,
                    IntRank::Int => 32,
                    IntRank::Long | IntRank::LongLong => 64,
                    IntRank::Int128 => 128,
                },
                *signed,
            )),
            _ => None,
        }
    }

    fn is_bool(&self, ty: TypeId) -> bool {
        matches!(
            self.program.types.get(ty),
            Type::Int {
                rank: IntRank::Bool,
                ..
            }
        )
    }

    fn load_typed(&mut self, alloc: u32, offset: i64, ty: TypeId) -> R<Val> {
        let types = &self.program.types;
        match types.get(ty).clone() {
            Type::Int { .. } => {
                let (bits, signed) = self.int_info(ty).unwrap_or((32, true));
                let b = self.bytes(alloc, offset, u64::from(bits / 8))?;
                let mut buf = [0u8; 16];
                buf[..b.len()].copy_from_slice(b);
                Ok(Val::Int(wrap(i128::from_le_bytes(buf), bits, signed)))
            }
            Type::Float(FloatKind::Float) => {
                let b = self.bytes(alloc, offset, 4)?;
                Ok(Val::Float(f64::from(f32::from_le_bytes(
                    b.try_into().unwrap_or([0; 4]),
                ))))
            }
            Type::Float(_) => {
                let b = self.bytes(alloc, offset, 8)?;
                Ok(Val::Float(f64::from_le_bytes(
                    b.try_into().unwrap_or([0; 8]),
                )))
            }
            Type::Pointer { .. } => {
                let b = self.bytes(alloc, offset, 8)?;
                let bits = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
                Ok(self.pointer_from_bits(bits))
            }
            Type::Record(_) | Type::Array { .. } => {
                let Some(size) = types.size_of(ty) else {
                    return fail("load of an aggregate of unknown size");
                };
                Ok(Val::Agg(self.bytes(alloc, offset, size)?.to_vec()))
            }
            Type::Void | Type::Function { .. } => fail("load of a void or function value"),
        }
    }

    fn pointer_from_bits(&self, bits: u64) -> Val {
        let p = decode_ptr(bits);
        if let Val::Ptr { alloc, offset: 0 } = p {
            if let Some(a) = self.allocs.get(alloc as usize) {
                if a.kind == AllocKind::Function {
                    return Val::FnPtr(a.name.clone());
                }
            }
        }
        p
    }

    fn bits_of(&mut self, v: &Val) -> R<u64> {
        Ok(match v {
            Val::Int(i) => *i as u64,
            Val::Float(f) => *f as i64 as u64,
            Val::Ptr { alloc, offset } => encode_ptr(*alloc, *offset),
            Val::FnPtr(name) => encode_ptr(self.function_alloc(name), 0),
            Val::Undef => 0,
            Val::Agg(_) => return fail("aggregate used as a scalar"),
        })
    }

    fn store_typed(&mut self, alloc: u32, offset: i64, ty: TypeId, v: &Val) -> R<()> {
        let types = &self.program.types;
        let bytes: Vec<u8> = match types.get(ty).clone() {
            Type::Int { .. } => {
                let (bits, _) = self.int_info(ty).unwrap_or((32, true));
                let i = match v {
                    Val::Float(f) => *f as i128,
                    other => i128::from(self.bits_of(other)? as i64),
                };
                let i = if let Val::Int(x) = v { *x } else { i };
                i.to_le_bytes()[..(bits / 8) as usize].to_vec()
            }
            Type::Float(kind) => {
                let f = match v {
                    Val::Float(f) => *f,
                    Val::Int(i) => *i as f64,
                    Val::Undef => 0.0,
                    other => return fail(format!("{other:?} stored as a float")),
                };
                match kind {
                    FloatKind::Float => (f as f32).to_le_bytes().to_vec(),
                    FloatKind::Double => f.to_le_bytes().to_vec(),
                    FloatKind::LongDouble => {
                        let mut b = f.to_le_bytes().to_vec();
                        b.extend([0; 8]);
                        b
                    }
                }
            }
            Type::Pointer { .. } => self.bits_of(v)?.to_le_bytes().to_vec(),
            Type::Record(_) | Type::Array { .. } => match v {
                Val::Agg(b) => b.clone(),
                Val::Undef => vec![0; types.size_of(ty).unwrap_or(0) as usize],
                other => return fail(format!("{other:?} stored as an aggregate")),
            },
            Type::Void | Type::Function { .. } => return fail("store of a void value"),
        };
        self.bytes_mut(alloc, offset, bytes.len() as u64)?
            .copy_from_slice(&bytes);
        Ok(())
    }

    fn call_function(&mut self, func: &'p Function, args: Vec<Val>) -> R<Val> {
        if self.depth >= self.max_depth {
            return fail(format!("call depth limit {} reached", self.max_depth));
        }
        self.depth += 1;
        let mut frame = Frame {
            func,
            vals: vec![Val::Undef; func.insts.len()],
            slots: vec![None; func.slots.len()],
        };
        let result = self.run_frame(&mut frame, &args);
        for (alloc, _) in frame.slots.iter().flatten() {
            self.allocs[*alloc as usize].live = false;
            self.allocs[*alloc as usize].bytes = Vec::new();
        }
        self.depth -= 1;
        result.map_err(|stop| match stop {
            Stop::Error(m) if !m.starts_with("in `") => {
                Stop::Error(format!("in `{}`: {m}", func.name))
            }
            other => other,
        })
    }

    fn run_frame(&mut self, frame: &mut Frame<'p>, args: &[Val]) -> R<Val> {
        let func = frame.func;
        let mut block = func.entry;
        let mut pred: Option<Block> = None;
        loop {
            self.enter_block(&func.name, block);
            let data = func.block(block);
            // Phis read their inputs simultaneously, before any of them is written.
            let mut phi_values = Vec::new();
            for &v in &data.insts {
                if let InstKind::Phi(incoming) = &func.inst(v).kind {
                    let Some(p) = pred else {
                        return fail(format!("phi {v} in the entry block"));
                    };
                    let Some((_, arg)) = incoming.iter().find(|(b, _)| *b == p) else {
                        return fail(format!("phi {v} has no argument for {p}"));
                    };
                    phi_values.push((v, frame.vals[arg.index()].clone()));
                }
            }
            for (v, val) in phi_values {
                if let Some(o) = self.observer.as_mut() {
                    o.on_value(&func.name, v, &val);
                }
                frame.vals[v.index()] = val;
            }
            for &v in &data.insts {
                if func.inst(v).kind.is_phi() {
                    continue;
                }
                if self.fuel == 0 {
                    return fail("step limit reached (the program may not terminate)");
                }
                self.fuel -= 1;
                let val = self.exec(frame, v, args)?;
                if let Some(o) = self.observer.as_mut() {
                    o.on_value(&func.name, v, &val);
                }
                frame.vals[v.index()] = val;
            }
            match &data.terminator {
                Terminator::Return(value) => {
                    return Ok(value
                        .map(|v| frame.vals[v.index()].clone())
                        .unwrap_or(Val::Undef))
                }
                Terminator::Jump(next) => {
                    pred = Some(block);
                    block = *next;
                }
                Terminator::Branch {
                    cond,
                    then_block,
                    else_block,
                } => {
                    let taken = self.truthy(&frame.vals[cond.index()])?;
                    pred = Some(block);
                    block = if taken { *then_block } else { *else_block };
                }
                Terminator::Unreachable => return fail(format!("reached unreachable {block}")),
            }
        }
    }

    fn enter_block(&mut self, function: &str, block: Block) {
        *self
            .block_counts
            .entry((function.to_string(), block))
            .or_insert(0) += 1;
        if let Some(o) = self.observer.as_mut() {
            o.on_block(function, block);
        }
    }

    fn truthy(&self, v: &Val) -> R<bool> {
        match v {
            Val::Int(i) => Ok(*i != 0),
            Val::Float(f) => Ok(*f != 0.0),
            Val::Ptr { alloc, offset } => Ok(*alloc != 0 || *offset != 0),
            Val::FnPtr(_) => Ok(true),
            Val::Undef => fail("branch on an undefined value"),
            Val::Agg(_) => fail("branch on an aggregate"),
        }
    }

    fn observe(
        &mut self,
        inst: Value,
        function: &str,
        alloc: u32,
        offset: i64,
        size: u64,
        st: bool,
    ) {
        if let Some(o) = self.observer.as_mut() {
            o.on_access(&Access {
                inst,
                function,
                alloc,
                offset,
                size,
                is_store: st,
            });
        }
    }

    fn exec(&mut self, frame: &mut Frame<'p>, v: Value, args: &[Val]) -> R<Val> {
        let func = frame.func;
        let inst = func.inst(v);
        let ty = inst.ty;
        let get = |x: &Value| frame.vals[x.index()].clone();
        Ok(match &inst.kind {
            InstKind::Param(i) => args.get(*i as usize).cloned().unwrap_or(Val::Undef),
            InstKind::Const(Constant::Int(c)) => self.convert_int(*c, ty),
            InstKind::Const(Constant::Float(f)) => self.round_float(*f, ty),
            InstKind::Undef => Val::Undef,
            InstKind::Phi(_) => return fail(format!("phi {v} after a non-phi instruction")),
            InstKind::Binary(op, a, b) => {
                let (ta, tb) = (func.inst(*a).ty, func.inst(*b).ty);
                self.binary(*op, get(a), get(b), ta, tb, ty)?
            }
            InstKind::Unary(op, a) => self.unary(*op, get(a), func.inst(*a).ty, ty)?,
            InstKind::Cast(a) => self.cast(get(a), func.inst(*a).ty, ty)?,
            InstKind::Select {
                cond,
                then_value,
                else_value,
            } => {
                if self.truthy(&get(cond))? {
                    get(then_value)
                } else {
                    get(else_value)
                }
            }
            InstKind::Load { addr } => {
                let (alloc, offset) = self.address(&get(addr))?;
                let size = self.program.types.size_of(ty).unwrap_or(0);
                self.observe(v, &func.name, alloc, offset, size, false);
                self.load_typed(alloc, offset, ty)?
            }
            InstKind::Store { addr, value } => {
                let (alloc, offset) = self.address(&get(addr))?;
                let size = self.program.types.size_of(ty).unwrap_or(0);
                self.observe(v, &func.name, alloc, offset, size, true);
                self.store_typed(alloc, offset, ty, &get(value))?;
                Val::Undef
            }
            InstKind::PtrAdd { base, index, scale } => {
                let index = match get(index) {
                    Val::Int(i) => i,
                    Val::Undef => return fail("pointer offset is undefined"),
                    other => return fail(format!("pointer offset {other:?}")),
                };
                let delta = (index as i64).wrapping_mul(*scale as i64);
                self.offset_pointer(get(base), delta)?
            }
            InstKind::FieldAddr { base, offset, .. } => {
                self.offset_pointer(get(base), *offset as i64)?
            }
            InstKind::SlotAddr(s) => {
                let slot = func.slot(*s);
                let size = match slot.vla_size {
                    Some(sv) => match frame.vals[sv.index()] {
                        Val::Int(n) if n >= 0 => n as u64,
                        ref other => return fail(format!("VLA `{}` of size {other:?}", slot.name)),
                    },
                    None => self.program.types.size_of(slot.ty).unwrap_or(0),
                };
                // A VLA declared in a loop gets fresh storage when its size changes.
                let alloc = match frame.slots[s.index()] {
                    Some((alloc, old)) if old == size => alloc,
                    _ => {
                        let alloc =
                            self.new_alloc(vec![0; size as usize], AllocKind::Slot, &slot.name);
                        frame.slots[s.index()] = Some((alloc, size));
                        alloc
                    }
                };
                Val::Ptr { alloc, offset: 0 }
            }
            InstKind::GlobalAddr(g) => match self.globals.get(g) {
                Some(&alloc) => Val::Ptr { alloc, offset: 0 },
                None => return fail(format!("unknown global {g}")),
            },
            InstKind::FuncAddr(name) => Val::FnPtr(name.clone()),
            InstKind::StringAddr(text) => self.string_ptr(text),
            InstKind::Call {
                callee,
                args: call_args,
            } => {
                let values: Vec<Val> = call_args.iter().map(&get).collect();
                let name = match callee {
                    Callee::Direct(name) => name.clone(),
                    Callee::Indirect(f) => match get(f) {
                        Val::FnPtr(name) => name,
                        other => {
                            let bits = self.bits_of(&other)?;
                            match self.pointer_from_bits(bits) {
                                Val::FnPtr(name) => name,
                                _ => return fail(format!("call through {other:?}")),
                            }
                        }
                    },
                };
                match self.program.function(&name) {
                    Some(callee) => self.call_function(callee, values)?,
                    None => self.call_library(&name, &values, Some(ty), v, &func.name)?,
                }
            }
        })
    }

    fn offset_pointer(&self, base: Val, delta: i64) -> R<Val> {
        match base {
            Val::Ptr { alloc, offset } => Ok(Val::Ptr {
                alloc,
                offset: offset.wrapping_add(delta),
            }),
            Val::Int(i) => match decode_ptr(i as u64) {
                Val::Ptr { alloc, offset } => Ok(Val::Ptr {
                    alloc,
                    offset: offset.wrapping_add(delta),
                }),
                _ => fail("bad pointer"),
            },
            Val::Undef => fail("arithmetic on an undefined pointer"),
            other => fail(format!("pointer arithmetic on {other:?}")),
        }
    }

    fn convert_int(&self, c: i128, ty: TypeId) -> Val {
        match self.program.types.get(ty) {
            Type::Float(_) => self.round_float(c as f64, ty),
            Type::Pointer { .. } => decode_ptr(c as u64),
            _ => match self.int_info(ty) {
                Some((bits, signed)) => Val::Int(wrap(c, bits, signed)),
                None => Val::Int(c),
            },
        }
    }

    fn int_result(&self, v: i128, ty: Option<TypeId>) -> Val {
        match ty {
            Some(t) => self.convert_int(v, t),
            None => Val::Int(v),
        }
    }

    fn round_float(&self, f: f64, ty: TypeId) -> Val {
        match self.program.types.get(ty) {
            Type::Float(FloatKind::Float) => Val::Float(f64::from(f as f32)),
            Type::Float(_) => Val::Float(f),
            _ => self.convert_int(f as i128, ty),
        }
    }

    fn int_of(&mut self, v: &Val) -> R<Option<i128>> {
        Ok(match v {
            Val::Int(i) => Some(*i),
            Val::Undef => None,
            Val::Float(f) => Some(*f as i128),
            other => Some(i128::from(self.bits_of(other)?)),
        })
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val, ta: TypeId, tb: TypeId, ty: TypeId) -> R<Val> {
        let types = &self.program.types;
        let float_operands = types.is_float(ta) || types.is_float(tb);
        if float_operands {
            let (Some(x), Some(y)) = (to_f64(&a), to_f64(&b)) else {
                return Ok(Val::Undef);
            };
            let r = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => x / y,
                BinOp::Rem => x % y,
                BinOp::Eq => return Ok(Val::Int((x == y).into())),
                BinOp::Ne => return Ok(Val::Int((x != y).into())),
                BinOp::Lt => return Ok(Val::Int((x < y).into())),
                BinOp::Le => return Ok(Val::Int((x <= y).into())),
                BinOp::Gt => return Ok(Val::Int((x > y).into())),
                BinOp::Ge => return Ok(Val::Int((x >= y).into())),
                _ => return fail(format!("operator {} on floats", op.symbol())),
            };
            return Ok(self.round_float(r, ty));
        }
        let pointer_operands = types.is_pointer(ta) || types.is_pointer(tb);
        let (Some(x), Some(y)) = (self.int_of(&a)?, self.int_of(&b)?) else {
            return Ok(Val::Undef);
        };
        if op.is_comparison() {
            let signed = !pointer_operands && types.is_signed(ta) && types.is_signed(tb);
            let (x, y) = if signed {
                (x, y)
            } else {
                let bits = self.int_info(ta).map_or(64, |i| i.0);
                (
                    wrap(x, bits, false),
                    wrap(y, bits.max(self.int_info(tb).map_or(64, |i| i.0)), false),
                )
            };
            let r = match op {
                BinOp::Eq => x == y,
                BinOp::Ne => x != y,
                BinOp::Lt => x < y,
                BinOp::Le => x <= y,
                BinOp::Gt => x > y,
                _ => x >= y,
            };
            return Ok(Val::Int(r.into()));
        }
        let (bits, signed) = self.int_info(ty).unwrap_or((64, false));
        let r = match op {
            BinOp::Add => x.wrapping_add(y),
            BinOp::Sub => x.wrapping_sub(y),
            BinOp::Mul => x.wrapping_mul(y),
            BinOp::Div | BinOp::Rem => {
                if y == 0 {
                    return fail("integer division by zero");
                }
                // Operands are already converted, but reinterpret them in the result type.
                let (x, y) = (wrap(x, bits, signed), wrap(y, bits, signed));
                if op == BinOp::Div {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                }
            }
            BinOp::Shl => x.wrapping_shl((y as u32) & (bits - 1)),
            BinOp::Shr => {
                let (abits, asigned) = self.int_info(ta).unwrap_or((bits, signed));
                wrap(x, abits, asigned) >> ((y as u32) & (abits - 1))
            }
            BinOp::BitAnd => x & y,
            BinOp::BitOr => x | y,
            BinOp::BitXor => x ^ y,
            _ => return fail(format!("operator {}", op.symbol())),
        };
        Ok(self.convert_int(r, ty))
    }

    fn unary(&mut self, op: UnOp, a: Val, ta: TypeId, ty: TypeId) -> R<Val> {
        if let Val::Undef = a {
            return Ok(Val::Undef);
        }
        Ok(match op {
            UnOp::Not => Val::Int((!self.truthy(&a)?).into()),
            UnOp::Neg if self.program.types.is_float(ta) => {
                self.round_float(-to_f64(&a).unwrap_or(0.0), ty)
            }
            UnOp::Neg => {
                let x = self.int_of(&a)?.unwrap_or(0);
                self.convert_int(x.wrapping_neg(), ty)
            }
            UnOp::BitNot => {
                let x = self.int_of(&a)?.unwrap_or(0);
                self.convert_int(!x, ty)
            }
        })
    }

    fn cast(&mut self, a: Val, from: TypeId, to: TypeId) -> R<Val> {
        let types = &self.program.types;
        if let Val::Undef = a {
            return Ok(Val::Undef);
        }
        if self.is_bool(to) {
            return Ok(Val::Int(self.truthy(&a)?.into()));
        }
        Ok(match types.get(to) {
            Type::Void => Val::Undef,
            Type::Float(_) => match a {
                Val::Float(f) => self.round_float(f, to),
                Val::Int(i) => self.round_float(i as f64, to),
                other => return fail(format!("cast of {other:?} to a float")),
            },
            Type::Int { .. } => match a {
                Val::Float(f) => {
                    // C leaves out-of-range conversions undefined; saturate like Rust.
                    let (bits, signed) = self.int_info(to).unwrap_or((32, true));
                    let i = if signed || bits > 64 {
                        f as i128
                    } else {
                        (f as i64 as i128).max(f as u64 as i128)
                    };
                    Val::Int(wrap(i, bits, signed))
                }
                Val::Agg(_) => return fail("cast of an aggregate"),
                other => {
                    let x = self.int_of(&other)?.unwrap_or(0);
                    self.convert_int(x, to)
                }
            },
            Type::Pointer { .. } => match a {
                Val::Int(i) => self.pointer_from_bits(i as u64),
                Val::Ptr { .. } | Val::FnPtr(_) => a,
                other => return fail(format!("cast of {other:?} to a pointer")),
            },
            _ => {
                let _ = from;
                a
            }
        })
    }

    fn read_c_string(&self, v: &Val) -> R<Vec<u8>> {
        let (alloc, offset) = self.address(v)?;
        let mut out = Vec::new();
        let mut at = offset;
        loop {
            let b = self.bytes(alloc, at, 1)?[0];
            if b == 0 {
                return Ok(out);
            }
            out.push(b);
            at += 1;
        }
    }

    fn call_library(
        &mut self,
        name: &str,
        args: &[Val],
        ret: Option<TypeId>,
        inst: Value,
        caller: &str,
    ) -> R<Val> {
        let arg = |i: usize| args.get(i).cloned().unwrap_or(Val::Undef);
        let int = |i: usize| -> i128 {
            match args.get(i) {
                Some(Val::Int(x)) => *x,
                Some(Val::Float(f)) => *f as i128,
                _ => 0,
            }
        };
        let float = |i: usize| -> f64 { args.get(i).and_then(to_f64).unwrap_or(0.0) };
        let float_result = |interp: &Self, f: f64| match ret {
            Some(t) => interp.round_float(f, t),
            None => Val::Float(f),
        };
        let name = name.strip_prefix("__builtin_").unwrap_or(name);
        Ok(match name {
            "malloc" | "calloc" => {
                let size = if name == "calloc" {
                    int(0) * int(1)
                } else {
                    int(0)
                };
                if !(0..=1 << 32).contains(&size) {
                    return fail(format!("{name} of {size} bytes"));
                }
                let alloc = self.new_alloc(vec![0; size as usize], AllocKind::Heap, "heap");
                Val::Ptr { alloc, offset: 0 }
            }
            "realloc" => {
                let size = int(1).max(0) as usize;
                let mut bytes = vec![0; size];
                if let Val::Ptr { alloc, offset: 0 } = arg(0) {
                    if alloc != 0 {
                        let old = &self.allocs[alloc as usize];
                        let n = old.bytes.len().min(size);
                        bytes[..n].copy_from_slice(&old.bytes[..n]);
                        self.allocs[alloc as usize].live = false;
                    }
                }
                let alloc = self.new_alloc(bytes, AllocKind::Heap, "heap");
                Val::Ptr { alloc, offset: 0 }
            }
            "free" => {
                match arg(0) {
                    Val::Ptr { alloc: 0, .. } | Val::Int(0) => {}
                    Val::Ptr { alloc, offset: 0 }
                        if self.allocs[alloc as usize].kind == AllocKind::Heap
                            && self.allocs[alloc as usize].live =>
                    {
                        self.allocs[alloc as usize].live = false;
                    }
                    other => return fail(format!("free of {other:?}")),
                }
                Val::Undef
            }
            "memset" => {
                let (alloc, offset) = self.address(&arg(0))?;
                let n = int(2) as u64;
                self.observe(inst, caller, alloc, offset, n, true);
                let byte = int(1) as u8;
                self.bytes_mut(alloc, offset, n)?.fill(byte);
                arg(0)
            }
            "memcpy" | "memmove" => {
                let (dst, doff) = self.address(&arg(0))?;
                let (src, soff) = self.address(&arg(1))?;
                let n = int(2) as u64;
                self.observe(inst, caller, src, soff, n, false);
                self.observe(inst, caller, dst, doff, n, true);
                let data = self.bytes(src, soff, n)?.to_vec();
                self.bytes_mut(dst, doff, n)?.copy_from_slice(&data);
                arg(0)
            }
            "strlen" => Val::Int(self.read_c_string(&arg(0))?.len() as i128),
            "abs" | "labs" | "llabs" => self.int_result(int(0).wrapping_abs(), ret),
            "sqrt" | "sqrtf" => float_result(self, float(0).sqrt()),
            "fabs" | "fabsf" => float_result(self, float(0).abs()),
            "exp" | "expf" => float_result(self, float(0).exp()),
            "log" | "logf" => float_result(self, float(0).ln()),
            "log2" | "log2f" => float_result(self, float(0).log2()),
            "log10" | "log10f" => float_result(self, float(0).log10()),
            "exp2" | "exp2f" => float_result(self, float(0).exp2()),
            "tan" | "tanf" => float_result(self, float(0).tan()),
            "atan" | "atanf" => float_result(self, float(0).atan()),
            "atan2" | "atan2f" => float_result(self, float(0).atan2(float(1))),
            "tanh" | "tanhf" => float_result(self, float(0).tanh()),
            "round" | "roundf" => float_result(self, float(0).round()),
            "trunc" | "truncf" => float_result(self, float(0).trunc()),
            "fmod" | "fmodf" => float_result(self, float(0) % float(1)),
            "hypot" | "hypotf" => float_result(self, float(0).hypot(float(1))),
            "pow" | "powf" => float_result(self, float(0).powf(float(1))),
            "sin" | "sinf" => float_result(self, float(0).sin()),
            "cos" | "cosf" => float_result(self, float(0).cos()),
            "floor" | "floorf" => float_result(self, float(0).floor()),
            "ceil" | "ceilf" => float_result(self, float(0).ceil()),
            "fmin" | "fminf" => float_result(self, float(0).min(float(1))),
            "fmax" | "fmaxf" => float_result(self, float(0).max(float(1))),
            "printf" => {
                let format = self.read_c_string(&arg(0))?;
                let text = self.format(&format, &args[1.min(args.len())..])?;
                let n = text.len();
                self.stdout.push_str(&text);
                Val::Int(n as i128)
            }
            "puts" => {
                let s = self.read_c_string(&arg(0))?;
                self.stdout.push_str(&String::from_utf8_lossy(&s));
                self.stdout.push('\n');
                Val::Int(1)
            }
            "putchar" => {
                self.stdout.push(char::from(int(0) as u8));
                Val::Int(int(0))
            }
            "atoi" | "atol" | "strtol" | "strtoul" | "strtoll" => {
                let s = self.read_c_string(&arg(0))?;
                let base = if name.starts_with("strto") {
                    int(2) as u32
                } else {
                    10
                };
                let value = parse_c_integer(&String::from_utf8_lossy(&s), base);
                if name.starts_with("strto") {
                    if let Val::Ptr { alloc, offset } = arg(1) {
                        if alloc != 0 {
                            // We do not track the end; point it at the terminator.
                            let end = self.read_c_string(&arg(0))?.len() as i64;
                            let (sa, so) = self.address(&arg(0))?;
                            let bits = encode_ptr(sa, so + end);
                            self.bytes_mut(alloc, offset, 8)?
                                .copy_from_slice(&bits.to_le_bytes());
                        }
                    }
                }
                self.int_result(value, ret)
            }
            "exit" => return Err(Stop::Exit(int(0) as i32)),
            "abort" | "trap" | "unreachable" => return fail(format!("{name} called")),
            "expect" => arg(0),
            "assume_aligned" => arg(0),
            _ => return fail(format!("call to unknown external function `{name}`")),
        })
    }

    /// C `printf` formatting of the common conversions.
    fn format(&mut self, format: &[u8], args: &[Val]) -> R<String> {
        let mut out = String::new();
        let mut next = 0usize;
        let mut i = 0;
        let mut take = || -> Val {
            let v = args.get(next).cloned().unwrap_or(Val::Undef);
            next += 1;
            v
        };
        while i < format.len() {
            let c = format[i];
            if c != b'%' {
                out.push(char::from(c));
                i += 1;
                continue;
            }
            i += 1;
            let mut flags = String::new();
            while i < format.len() && b"-+ 0#".contains(&format[i]) {
                flags.push(char::from(format[i]));
                i += 1;
            }
            let mut width: Option<usize> = None;
            if i < format.len() && format[i] == b'*' {
                let w = take().as_int().unwrap_or(0);
                if w < 0 {
                    flags.push('-');
                }
                width = Some(w.unsigned_abs() as usize);
                i += 1;
            } else {
                while i < format.len() && format[i].is_ascii_digit() {
                    width = Some(width.unwrap_or(0) * 10 + usize::from(format[i] - b'0'));
                    i += 1;
                }
            }
            let mut precision: Option<usize> = None;
            if i < format.len() && format[i] == b'.' {
                i += 1;
                if i < format.len() && format[i] == b'*' {
                    precision = usize::try_from(take().as_int().unwrap_or(0)).ok();
                    i += 1;
                } else {
                    let mut p = 0;
                    while i < format.len() && format[i].is_ascii_digit() {
                        p = p * 10 + usize::from(format[i] - b'0');
                        i += 1;
                    }
                    precision = Some(p);
                }
            }
            let mut length = String::new();
            while i < format.len() && b"hlLqjzt".contains(&format[i]) {
                length.push(char::from(format[i]));
                i += 1;
            }
            let Some(&conv) = format.get(i) else {
                break;
            };
            i += 1;
            let int_bits = match length.as_str() {
                "hh" => 8,
                "h" => 16,
                "" => 32,
                _ => 64,
            };
            let body = match conv {
                b'%' => {
                    out.push('%');
                    continue;
                }
                b'd' | b'i' => {
                    let v = self.int_of(&take())?.unwrap_or(0);
                    let v = wrap(v, int_bits, true);
                    let mut digits = v.unsigned_abs().to_string();
                    if let Some(p) = precision {
                        digits = format!("{digits:0>p$}");
                    }
                    let sign = if v < 0 {
                        "-"
                    } else if flags.contains('+') {
                        "+"
                    } else if flags.contains(' ') {
                        " "
                    } else {
                        ""
                    };
                    pad_number(sign, &digits, width, &flags, precision.is_none())
                }
                b'u' | b'x' | b'X' | b'o' => {
                    let v = self.int_of(&take())?.unwrap_or(0);
                    let v = wrap(v, int_bits, false) as u128;
                    let mut digits = match conv {
                        b'u' => v.to_string(),
                        b'x' => format!("{v:x}"),
                        b'X' => format!("{v:X}"),
                        _ => format!("{v:o}"),
                    };
                    if let Some(p) = precision {
                        digits = format!("{digits:0>p$}");
                    }
                    let prefix = match conv {
                        b'x' if flags.contains('#') && v != 0 => "0x",
                        b'X' if flags.contains('#') && v != 0 => "0X",
                        _ => "",
                    };
                    pad_number(prefix, &digits, width, &flags, precision.is_none())
                }
                b'c' => {
                    let v = self.int_of(&take())?.unwrap_or(0);
                    pad(&char::from(v as u8).to_string(), width, &flags)
                }
                b's' => {
                    let s = self.read_c_string(&take())?;
                    let mut s = String::from_utf8_lossy(&s).into_owned();
                    if let Some(p) = precision {
                        s.truncate(p);
                    }
                    pad(&s, width, &flags)
                }
                b'p' => {
                    let v = take();
                    let bits = self.bits_of(&v)?;
                    pad(&format!("{bits:#x}"), width, &flags)
                }
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' => {
                    let v = to_f64(&take()).unwrap_or(0.0);
                    let text =
                        format_float(v.abs(), conv, precision.unwrap_or(6), flags.contains('#'));
                    let sign = if v.is_sign_negative() && !v.is_nan() {
                        "-"
                    } else if flags.contains('+') {
                        "+"
                    } else if flags.contains(' ') {
                        " "
                    } else {
                        ""
                    };
                    pad_number(sign, &text, width, &flags, v.is_finite())
                }
                other => {
                    return fail(format!(
                        "printf conversion %{} is not supported",
                        char::from(other)
                    ))
                }
            };
            out.push_str(&body);
        }
        Ok(out)
    }
}

fn to_f64(v: &Val) -> Option<f64> {
    match v {
        Val::Float(f) => Some(*f),
        Val::Int(i) => Some(*i as f64),
        _ => None,
    }
}

fn pad(s: &str, width: Option<usize>, flags: &str) -> String {
    let width = width.unwrap_or(0);
    if flags.contains('-') {
        format!("{s:<width$}")
    } else {
        format!("{s:>width$}")
    }
}

fn pad_number(
    sign: &str,
    digits: &str,
    width: Option<usize>,
    flags: &str,
    zero_ok: bool,
) -> String {
    let width = width.unwrap_or(0);
    if flags.contains('-') {
        return format!("{:<width$}", format!("{sign}{digits}"));
    }
    if flags.contains('0') && zero_ok {
        let w = width.saturating_sub(sign.len());
        return format!("{sign}{digits:0>w$}");
    }
    format!("{:>width$}", format!("{sign}{digits}"))
}

/// `%f`, `%e` and `%g` of a non-negative number.
fn format_float(v: f64, conv: u8, precision: usize, alt: bool) -> String {
    let upper = conv.is_ascii_uppercase();
    let text = if v.is_nan() {
        "nan".to_string()
    } else if v.is_infinite() {
        "inf".to_string()
    } else {
        match conv.to_ascii_lowercase() {
            b'f' => format!("{v:.precision$}"),
            b'e' => format_exp(v, precision),
            _ => {
                let p = if precision == 0 { 1 } else { precision };
                let exp = if v == 0.0 {
                    0
                } else {
                    // The exponent after rounding to p significant digits.
                    let e = format_exp(v, p - 1);
                    e[e.find('e').map_or(0, |i| i + 1)..]
                        .parse::<i32>()
                        .unwrap_or(0)
                };
                let mut s = if exp < -4 || exp >= p as i32 {
                    format_exp(v, p - 1)
                } else {
                    let decimals = (p as i32 - 1 - exp).max(0) as usize;
                    format!("{v:.decimals$}")
                };
                if !alt {
                    let (mantissa, exponent) = match s.find('e') {
                        Some(i) => (s[..i].to_string(), s[i..].to_string()),
                        None => (s.clone(), String::new()),
                    };
                    let mantissa = if mantissa.contains('.') {
                        mantissa
                            .trim_end_matches('0')
                            .trim_end_matches('.')
                            .to_string()
                    } else {
                        mantissa
                    };
                    s = mantissa + &exponent;
                }
                s
            }
        }
    };
    if upper {
        text.to_uppercase()
    } else {
        text
    }
}

fn format_exp(v: f64, precision: usize) -> String {
    let s = format!("{v:.precision$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

fn parse_c_integer(s: &str, base: u32) -> i128 {
    let s = s.trim_start();
    let (negative, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let (base, s) = match base {
        0 | 16 if s.starts_with("0x") || s.starts_with("0X") => (16, &s[2..]),
        0 if s.starts_with('0') && s.len() > 1 => (8, &s[1..]),
        0 => (10, s),
        b => (b, s),
    };
    let mut value: i128 = 0;
    for c in s.chars() {
        match c.to_digit(base) {
            Some(d) => value = value.saturating_mul(i128::from(base)) + i128::from(d),
            None => break,
        }
    }
    if negative {
        -value
    } else {
        value
    }
}

/// The bytes of a string literal as lowering records it: one or more quoted parts with C
/// escapes (`"ab\n" "c"`), or plain text (`__func__`).
fn unescape_literal(text: &str) -> Vec<u8> {
    let t = text.trim_start_matches(['L', 'u', 'U', '8']);
    if !t.starts_with('"') {
        return text.as_bytes().to_vec();
    }
    let bytes = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut inside = false;
    while i < bytes.len() {
        let c = bytes[i];
        if !inside {
            if c == b'"' {
                inside = true;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                inside = false;
                i += 1;
            }
            b'\\' if i + 1 < bytes.len() => {
                let e = bytes[i + 1];
                i += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'x' => {
                        let mut v: u32 = 0;
                        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
                            v = v * 16 + char::from(bytes[i]).to_digit(16).unwrap_or(0);
                            i += 1;
                        }
                        out.push(v as u8);
                    }
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        let mut digits = 1;
                        while digits < 3 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                            v = v * 8 + u32::from(bytes[i] - b'0');
                            i += 1;
                            digits += 1;
                        }
                        out.push(v as u8);
                    }
                    other => out.push(other),
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}
