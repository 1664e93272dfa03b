//! The handle constants `mpi.h` defines as macros (`MPI_COMM_WORLD`, `MPI_BYTE`, `MPI_SUM`,
//! `MPI_STATUS_IGNORE`, ...), as Rust `const`s: what a C program compiles them to, so that Rust
//! pays no load per use either.
//!
//! The C preprocessor expands each macro; this module evaluates the expansion, which on every
//! MPI ferrompi knows is one of two forms:
//! - an integer, cast to the handle type: MPICH and the MPI-5 ABI,
//!   `((MPI_Datatype)0x4c00010d)`, `(void *) -1`;
//! - the address of a global object, cast: Open MPI,
//!   `((MPI_Datatype) ((void *) &(ompi_mpi_byte)))`.
//!
//! Anything else fails the build with the expansion in the message. The constants shim
//! (`ferrompi_MPI_*`) still defines every one of them; a unit test compares the two.
//! Shared by `build.rs` and `tests/build_probe.rs`.

use std::fmt::Write as _;

/// What a handle macro evaluates to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// An integer, converted to the handle type.
    Int(i128),
    /// The address of a global object of the MPI library.
    Address(String),
}

/// A token of a macro's expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Int(i128),
    Punct(char),
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphabetic() || c == '_' {
            let mut word = String::new();
            while let Some(&c) = chars
                .peek()
                .filter(|c| c.is_ascii_alphanumeric() || **c == '_')
            {
                word.push(c);
                chars.next();
            }
            out.push(Token::Ident(word));
        } else if c.is_ascii_digit() {
            let mut word = String::new();
            while let Some(&c) = chars.peek().filter(|c| c.is_ascii_alphanumeric()) {
                word.push(c);
                chars.next();
            }
            out.push(Token::Int(integer(&word)?));
        } else if "()*&-".contains(c) {
            out.push(Token::Punct(c));
            chars.next();
        } else {
            return None;
        }
    }
    Some(out)
}

/// A C integer literal: decimal, hexadecimal or octal, with any `u`/`l` suffix.
fn integer(word: &str) -> Option<i128> {
    let digits = word.trim_end_matches(['u', 'U', 'l', 'L']);
    let (text, radix) = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (hex, 16)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (&digits[1..], 8)
    } else {
        (digits, 10)
    };
    i128::from_str_radix(text, radix).ok()
}

/// The index of the `)` that closes the `(` at `open`.
fn closing(tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        match t {
            Token::Punct('(') => depth += 1,
            Token::Punct(')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether the tokens name a type, as in a cast: identifiers and `*` only.
fn is_type(tokens: &[Token]) -> bool {
    !tokens.is_empty()
        && tokens
            .iter()
            .all(|t| matches!(t, Token::Ident(_) | Token::Punct('*')))
}

/// An operand: a value, or a bare identifier (only meaningful after `&`).
enum Operand {
    Value(Value),
    Ident(String),
}

fn operand(tokens: &[Token]) -> Option<Operand> {
    match tokens {
        [Token::Int(v)] => Some(Operand::Value(Value::Int(*v))),
        [Token::Ident(name)] => Some(Operand::Ident(name.clone())),
        [Token::Punct('-'), rest @ ..] => match operand(rest)? {
            Operand::Value(Value::Int(v)) => Some(Operand::Value(Value::Int(-v))),
            _ => None,
        },
        [Token::Punct('&'), rest @ ..] => match operand(rest)? {
            Operand::Ident(name) => Some(Operand::Value(Value::Address(name))),
            Operand::Value(_) => None,
        },
        [Token::Punct('('), ..] => {
            let close = closing(tokens, 0)?;
            let inner = &tokens[1..close];
            if close == tokens.len() - 1 {
                operand(inner) // parentheses around the whole
            } else if is_type(inner) {
                match operand(&tokens[close + 1..])? {
                    Operand::Value(v) => Some(Operand::Value(v)), // a cast
                    Operand::Ident(_) => None,
                }
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Evaluates a handle macro's expansion, or `None` for a form this module does not know.
pub fn evaluate(expansion: &str) -> Option<Value> {
    match operand(&tokens(expansion)?)? {
        Operand::Value(v) => Some(v),
        Operand::Ident(_) => None,
    }
}

/// How the bindings spell a handle's C type in Rust: the Rust type and whether its value is a
/// pointer (else an integer), wrapped in a one-field struct or not.
struct Shape {
    rust: String,
    pointer: bool,
    newtype: bool,
}

fn shape(c_type: &str, bindings: &str) -> Result<Shape, String> {
    if let Some(pointee) = c_type.strip_suffix('*') {
        let pointee = match pointee.trim() {
            "void" => "::std::os::raw::c_void",
            "int" => "::std::os::raw::c_int",
            other => other,
        };
        return Ok(Shape {
            rust: format!("*mut {pointee}"),
            pointer: true,
            newtype: false,
        });
    }
    let field = bindings
        .split(&format!("pub struct {c_type}(pub "))
        .nth(1)
        .and_then(|rest| rest.split(')').next());
    let alias = bindings
        .split(&format!("pub type {c_type} = "))
        .nth(1)
        .and_then(|rest| rest.split(';').next());
    match (field, alias) {
        (Some(inner), _) => Ok(Shape {
            rust: c_type.to_string(),
            pointer: inner.trim_start().starts_with('*'),
            newtype: true,
        }),
        (None, Some(inner)) => Ok(Shape {
            rust: c_type.to_string(),
            pointer: inner.trim_start().starts_with('*'),
            newtype: false,
        }),
        (None, None) => Err(format!("the bindings do not define {c_type}")),
    }
}

/// The Rust module of the handle constants: `(C type, name, expansion)` for each macro the
/// header defines, evaluated against the bindings (`pub struct MPI_Comm(pub ...)`).
pub fn module(handles: &[(&str, &str, &str)], bindings: &str) -> Result<String, String> {
    module_with(handles, bindings, false)
}

fn module_with(
    handles: &[(&str, &str, &str)],
    bindings: &str,
    placeholder: bool,
) -> Result<String, String> {
    let mut consts = String::new();
    let mut objects = Vec::new();
    let mut compare = String::from(
        "/// The handle constants whose value differs from the shim's `ferrompi_MPI_*` object.\n\
         #[cfg(test)]\npub(crate) fn handle_constants_differing() -> Vec<&'static str> {\n    \
         let mut differing = Vec::new();\n",
    );
    for &(c_type, name, expansion) in handles {
        let value = evaluate(expansion).ok_or_else(|| {
            format!("cannot evaluate {name}, which mpi.h defines as `{expansion}`")
        })?;
        let shape = shape(c_type, bindings)?;
        let hex = |v: i128| {
            let sign = if v < 0 { "-" } else { "" };
            format!("{sign}{:#x}", v.unsigned_abs())
        };
        let raw = match (&value, shape.pointer) {
            (Value::Int(v), false) => format!("{}_i64 as _", hex(*v)),
            (Value::Int(v), true) => format!("{}_isize as _", hex(*v)),
            (Value::Address(object), true) => {
                objects.push(object.clone());
                format!("(&raw const objects::{object}).cast_mut().cast()")
            }
            (Value::Address(_), false) => {
                return Err(format!(
                    "{name} is an address (`{expansion}`) but {c_type} is an integer"
                ));
            }
        };
        let value = if shape.newtype {
            format!("{}({raw})", shape.rust)
        } else {
            raw
        };
        let _ = if placeholder {
            writeln!(
                consts,
                "/// `{name}` (its value comes from `mpi.h` when the crate is built)."
            )
        } else {
            writeln!(
                consts,
                "/// `{name}`, which `mpi.h` defines as `{expansion}`."
            )
        };
        let _ = writeln!(consts, "pub const {name}: {} = {value};", shape.rust);
        let _ = writeln!(
            compare,
            "    // SAFETY: the shim's constant, immutable and defined before main.\n    \
             if !same_bits(&{name}, unsafe {{ &ferrompi_{name} }}) {{\n        \
             differing.push(\"{name}\");\n    }}"
        );
    }
    objects.sort();
    objects.dedup();
    let mut out = String::from("// Generated by ferrompi's build.rs (build/handles.rs).\n");
    if !objects.is_empty() {
        out.push_str(
            "/// The MPI library's predefined objects the handles point to; only their addresses\n\
             /// are taken.\nmod objects {\n    /// Never read: only its address is taken.\n    \
             #[repr(C)]\n    pub struct Object {\n        _opaque: [u8; 0],\n    }\n    \
             unsafe extern \"C\" {\n",
        );
        for object in &objects {
            let _ = writeln!(out, "        pub safe static {object}: Object;");
        }
        out.push_str("    }\n}\n");
    }
    out.push_str(&consts);
    out.push_str(&compare);
    out.push_str("    differing\n}\n");
    Ok(out)
}

/// The handle constants for a documentation build, where there is no `mpi.h` to expand: zero
/// (or null) values of the right types, never used.
pub fn placeholder_module(names: &[(&str, &str)], bindings: &str) -> Result<String, String> {
    // A name the bindings declare as an object (MPICH's `extern int * const MPI_UNWEIGHTED`)
    // is not a macro of that header.
    let handles: Vec<(&str, &str, &str)> = names
        .iter()
        .filter(|&&(_, n)| !bindings.contains(&format!("pub static {n}:")))
        .map(|&(t, n)| (t, n, "0"))
        .collect();
    module_with(&handles, bindings, true)
}
