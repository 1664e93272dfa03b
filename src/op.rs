//! Reduction operations (MPI-4.0 §6.9): the predefined ones, typed so that an operation MPI does
//! not define for a type does not compile, and user-defined ones from Rust closures.
//!
//! | op | MPI | defined for |
//! |---|---|---|
//! | [`Sum`], [`Prod`] | `MPI_SUM`, `MPI_PROD` | integers, floats ([`Arithmetic`]) |
//! | [`Min`], [`Max`] | `MPI_MIN`, `MPI_MAX` | integers, floats ([`Ordered`]) |
//! | [`LogicalAnd`], [`LogicalOr`], [`LogicalXor`] | `MPI_LAND`, `MPI_LOR`, `MPI_LXOR` | integers, `bool` ([`Logical`]) |
//! | [`BitAnd`], [`BitOr`], [`BitXor`] | `MPI_BAND`, `MPI_BOR`, `MPI_BXOR` | integers ([`Bitwise`]) |
//! | [`MinLoc`], [`MaxLoc`] | `MPI_MINLOC`, `MPI_MAXLOC` | [`Loc`] pairs |
//! | [`UserOp`] | `MPI_Op_create` | any [`Equivalence`] type |
//! | [`Replace`], [`NoOp`] | `MPI_REPLACE`, `MPI_NO_OP` | one-sided accumulates only ([`AccumulateOp`]) |
//!
//! Arrays `[T; N]` reduce element-wise wherever `T` does.
//!
//! # User-defined operations
//! MPI calls a user function with no user-data pointer, which is why bindings often keep a fixed
//! table of callback slots. ferrompi needs none: each [`UserOp`] owns a private datatype (one
//! value of `T`, `MPI_Type_contiguous`) carrying a pointer to the closure as a datatype attribute,
//! and a generic trampoline recovers the closure from the datatype MPI passes it. Any number of
//! operations can be alive at once. A panic inside the closure cannot unwind into C: it is caught,
//! reported, and the job is aborted (`MPI_Abort`), since MPI cannot finish the reduction.
//!
//! The closure sees MPI's buffers only as valid values of `T`: they are handed over directly
//! when they are dense, aligned values of a type for which every bit pattern is valid, and
//! otherwise copied into aligned storage first, covering only the bytes the datatype describes
//! (a `Loc<f64>` is 16 bytes, but MPI keeps only 12 of the last one) and repaired (`bool`). The
//! input side is never written: MPI may pass the caller's send buffer there. MPI calls are
//! forbidden inside the closure (MPI-4.0 §6.9.5): any made through ferrompi return
//! [`ErrorKind::InCallback`].

use crate::datatype::{
    Datatype, Elementwise, Equivalence, count_overflow, recv_ptr, repair, send_ptr,
};
use crate::env::{Mpi, enter};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::sync::OnceLock;

/// What a reduction hands MPI: the op, the datatype of one MPI element, and how many of those
/// make one value of `T`.
#[derive(Debug, Clone, Copy)]
pub struct Operand {
    pub(crate) op: ffi::MPI_Op,
    pub(crate) datatype: ffi::MPI_Datatype,
    pub(crate) per_value: usize,
}

// SAFETY: the values of two handles (pointers in Open MPI, integers in MPICH) and a count; only
// the crate passes them to MPI, behind the thread gate. Written out so the traits are the same
// on every MPI.
unsafe impl Send for Operand {}
// SAFETY: as for `Send`; immutable.
unsafe impl Sync for Operand {}

mod sealed {
    pub trait Sealed {}
    /// The elements each op is defined on (the markers below extend them to every
    /// `Elementwise` type made of them).
    #[diagnostic::on_unimplemented(
        message = "`MPI_SUM` and `MPI_PROD` are not defined on `{Self}`",
        note = "they are on integers and floating point"
    )]
    pub trait ArithmeticElement {}
    #[diagnostic::on_unimplemented(
        message = "`MPI_MIN` and `MPI_MAX` are not defined on `{Self}`",
        note = "they are on integers and floating point"
    )]
    pub trait OrderedElement {}
    #[diagnostic::on_unimplemented(
        message = "the logical ops are not defined on `{Self}`",
        note = "they are on integers and `bool`"
    )]
    pub trait LogicalElement {}
    #[diagnostic::on_unimplemented(
        message = "the bitwise ops are not defined on `{Self}`",
        note = "they are on integers"
    )]
    pub trait BitwiseElement {}
}

/// A reduction operation applicable to values of `T`. Implemented by the predefined op types
/// for the types MPI defines them on, and by `&UserOp<T>`; sealed.
pub trait Op<T: Equivalence>: sealed::Sealed {
    /// The MPI op and datatype to reduce `T` with.
    #[doc(hidden)]
    fn operand(&self) -> Operand;
}

/// A predefined op (`MPI_SUM`, `MPI_MAX`, ...): one the MPI applies itself, also to memory the
/// host cannot read, such as a GPU's (see [`gpu`](crate::gpu)). Sealed.
pub trait Predefined<T: Equivalence>: Op<T> {}

/// An operation a persistent collective can own for as long as its request lives: a predefined
/// op, or a [`UserOp`] moved in (not `&UserOp`: a leaked request could then outlive the closure
/// that MPI still calls). Sealed.
///
/// A `UserOp` by value is *only* an `OwnedOp`, not an [`Op`]: a nonblocking call given one would
/// drop it (and free its closure) while the operation is still in flight, so that does not
/// compile:
///
/// ```compile_fail
/// # use ferrompi::{Mpi, UserOp};
/// # let mpi = Mpi::init().unwrap();
/// # let world = mpi.world();
/// let op = UserOp::<f64>::commutative(&mpi, |a, b| b.iter_mut().zip(a).for_each(|(y, x)| *y += x)).unwrap();
/// let (send, mut recv) = ([1.0f64; 4], [0.0f64; 4]);
/// ferrompi::scope(|s| world.iallreduce(s, &send, &mut recv, op).map(drop)).unwrap();
/// ```
pub trait OwnedOp<T: Equivalence>: sealed::Sealed + Send + Sync {
    /// The MPI op and datatype to reduce `T` with.
    #[doc(hidden)]
    fn owned_operand(&self) -> Operand;
}

/// An operation one-sided accumulates apply at the target (MPI-4.0 §12.3.4): a predefined
/// reduction op, [`Replace`] or [`NoOp`]. User-defined ops are not allowed there, so
/// [`UserOp`] does not implement it. Sealed.
pub trait AccumulateOp<T: Equivalence>: sealed::Sealed {
    /// The MPI op and datatype to accumulate `T` with.
    #[doc(hidden)]
    fn accumulate_operand(&self) -> Operand;
}

macro_rules! rma_only {
    ($($(#[$doc:meta])* $name:ident = $konst:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl<T: Equivalence> AccumulateOp<T> for $name {
            #[inline(always)]
            fn accumulate_operand(&self) -> Operand {
                let op = ffi::$konst;
                Operand { op, datatype: T::datatype().as_raw(), per_value: T::ELEMENTS }
            }
        }
    )*};
}

rma_only! {
    /// `MPI_REPLACE`: the target's value becomes the origin's (an atomic put).
    Replace = MPI_REPLACE;
    /// `MPI_NO_OP`: the target is left as it is (an atomic get, with `get_accumulate` or
    /// `fetch_and_op`).
    NoOp = MPI_NO_OP;
}

/// A marker of the types an op is defined on: its element types, and every [`Elementwise`]
/// type made of them (arrays, `#[equivalence(elementwise)]` structs).
macro_rules! marker {
    ($(#[$doc:meta])* $name:ident / $element:ident: $($ty:ty),*) => {
        $(#[$doc])*
        #[diagnostic::on_unimplemented(
            message = "this predefined op is not defined on `{Self}`",
            label = "not a type of this op",
            note = "numbers, `bool` for the logical ops, arrays of them and structs derived with `#[equivalence(elementwise)]` (every field of one element type, no padding) are; reduce other structs with a `UserOp`"
        )]
        pub trait $name: Equivalence + sealed::Sealed {}
        $( impl sealed::$element for $ty {} )*
        impl<T: Elementwise<Element: sealed::$element>> $name for T {}
    };
}

impl<T: Elementwise> sealed::Sealed for T {}

marker!(
    /// Types `MPI_SUM` and `MPI_PROD` are defined on: C integers and floating point, and
    /// arrays and elementwise structs of them.
    Arithmetic / ArithmeticElement: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64
);
marker!(
    /// Types `MPI_MIN` and `MPI_MAX` are defined on: C integers and floating point, and
    /// arrays and elementwise structs of them.
    Ordered / OrderedElement: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64
);
marker!(
    /// Types the logical ops are defined on: C integers and `bool` (`MPI_C_BOOL`), and arrays
    /// and elementwise structs of them.
    Logical / LogicalElement: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool
);
marker!(
    /// Types the bitwise ops are defined on: C integers, and arrays and elementwise structs
    /// of them.
    Bitwise / BitwiseElement: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize
);

macro_rules! predefined {
    ($($(#[$doc:meta])* $name:ident = $konst:ident for $bound:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        // MPI sees `T::ELEMENTS` values of the element's predefined datatype: for an array
        // or an elementwise struct, its elements one by one.
        impl<T: $bound> Op<T> for $name {
            #[inline(always)]
            fn operand(&self) -> Operand {
                let op = ffi::$konst;
                Operand { op, datatype: T::datatype().as_raw(), per_value: T::ELEMENTS }
            }
        }
        impl<T: $bound> Predefined<T> for $name {}
        impl<T: $bound> OwnedOp<T> for $name {
            #[inline(always)]
            fn owned_operand(&self) -> Operand {
                Op::<T>::operand(self)
            }
        }
        impl<T: $bound> AccumulateOp<T> for $name {
            #[inline(always)]
            fn accumulate_operand(&self) -> Operand {
                Op::<T>::operand(self)
            }
        }
        impl $name {
            /// Whether MPI may combine values in any order (`MPI_Op_commutative`, MPI-4.0
            /// §6.9.7): `true` for every predefined op.
            ///
            /// ```
            /// # let mpi = ferrompi::Mpi::init()?;
            /// assert!(ferrompi::op::Sum.is_commutative()?);
            /// # Ok::<(), ferrompi::Error>(())
            /// ```
            ///
            /// # Errors
            /// [`ErrorKind::WrongThread`] (also before initialisation); [`ErrorKind::Mpi`].
            pub fn is_commutative(&self) -> Result<bool> {
                op_commutative(ffi::$konst)
            }
        }
    )*};
}

/// `MPI_Op_commutative` of a valid op.
fn op_commutative(op: ffi::MPI_Op) -> Result<bool> {
    const OP: &str = "op_commutative";
    let mut commute: c_int = 0;
    let _gate = enter(OP)?;
    // SAFETY: a valid op (predefined, or a UserOp's, alive while borrowed); writes one int.
    check(unsafe { ffi::MPI_Op_commutative(op, &mut commute) }, OP)?;
    Ok(commute != 0)
}

impl Mpi {
    /// Combines `input` into `inout` with `op`, here, without communication: `inout[i] =
    /// input[i] ∘ inout[i]` (`MPI_Reduce_local`, MPI-4.0 §6.9.7). The same op, applied by the
    /// same code MPI reduces with, e.g. to check a user op or to reduce what arrived by
    /// point-to-point. Any length: counts over `int` are split, which an elementwise op allows.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::op::Sum;
    /// let mut acc = [1.0f64, 2.0];
    /// mpi.reduce_local(&[0.5, 0.5], &mut acc, Sum)?; // acc = input ⊕ acc, no communication
    /// assert_eq!(acc, [1.5, 2.5]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::BufferSize`] if the lengths differ; [`ErrorKind::CountOverflow`];
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn reduce_local<T: Equivalence, O: Op<T>>(
        &self,
        input: &[T],
        inout: &mut [T],
        op: O,
    ) -> Result<()> {
        const OP: &str = "reduce_local";
        if input.len() != inout.len() {
            return Err(ErrorKind::BufferSize {
                operation: OP,
                expected: input.len(),
                actual: inout.len(),
            }
            .into());
        }
        let operand = op.operand();
        // Whole values per call, each call's count an int.
        let per_value = operand.per_value.max(1);
        let per_call = (c_int::MAX as usize / per_value).max(1);
        for (from, to) in input.chunks(per_call).zip(inout.chunks_mut(per_call)) {
            let n = c_int::try_from(from.len() * per_value)
                .map_err(|_| count_overflow(from.len(), per_value, OP))?;
            let rc = {
                let _gate = enter(OP)?;
                // SAFETY: both slices hold `n` elements of the operand's datatype; the op is
                // predefined or a UserOp borrowed for the call. MPI writes only `to`.
                unsafe {
                    ffi::MPI_Reduce_local(
                        send_ptr(from),
                        recv_ptr(to),
                        n,
                        operand.datatype,
                        operand.op,
                    )
                }
            };
            repair(to);
            check(rc, OP)?;
        }
        Ok(())
    }
}

predefined! {
    /// `MPI_SUM`.
    Sum = MPI_SUM for Arithmetic;
    /// `MPI_PROD`.
    Prod = MPI_PROD for Arithmetic;
    /// `MPI_MIN`.
    Min = MPI_MIN for Ordered;
    /// `MPI_MAX`.
    Max = MPI_MAX for Ordered;
    /// `MPI_LAND`.
    LogicalAnd = MPI_LAND for Logical;
    /// `MPI_LOR`.
    LogicalOr = MPI_LOR for Logical;
    /// `MPI_LXOR`.
    LogicalXor = MPI_LXOR for Logical;
    /// `MPI_BAND`.
    BitAnd = MPI_BAND for Bitwise;
    /// `MPI_BOR`.
    BitOr = MPI_BOR for Bitwise;
    /// `MPI_BXOR`.
    BitXor = MPI_BXOR for Bitwise;
    /// `MPI_MINLOC`: the smallest value and the lowest index holding it.
    MinLoc = MPI_MINLOC for LocPair;
    /// `MPI_MAXLOC`: the largest value and the lowest index holding it.
    MaxLoc = MPI_MAXLOC for LocPair;
}

/// A value with an index, for [`MinLoc`] and [`MaxLoc`] (`MPI_FLOAT_INT`, `MPI_DOUBLE_INT`,
/// `MPI_2INT`, `MPI_LONG_INT`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[repr(C)]
pub struct Loc<V> {
    /// The value compared.
    pub value: V,
    /// Where it came from, typically a rank or an element index.
    pub index: i32,
}

/// The [`Loc`] pair types MPI has datatypes for.
pub trait LocPair: Equivalence + sealed::Sealed {}

macro_rules! loc_pairs {
    ($($v:ty => $konst:ident),*) => {$(
        impl LocPair for Loc<$v> {}
        // SAFETY: `Loc<V>` is `repr(C)` `{ V, int }`, the C struct MPI's pair datatype describes
        // (its type map covers the two fields; MPI never touches the trailing padding). One MPI
        // element per value; every bit pattern of both fields is valid.
        unsafe impl Equivalence for Loc<$v> {
            const ELEMENTS: usize = 1;
            #[inline(always)]
            fn datatype() -> Datatype {
                // SAFETY: a predefined datatype (`ffi`'s handle constants), valid while MPI is.
                unsafe { Datatype::from_raw(ffi::$konst) }
            }
        }
        // SAFETY: one element of a predefined pair datatype per value, its own element.
        unsafe impl Elementwise for Loc<$v> {
            type Element = Loc<$v>;
        }
    )*};
}
loc_pairs!(f32 => MPI_FLOAT_INT, f64 => MPI_DOUBLE_INT, i32 => MPI_2INT);
// `MPI_LONG_INT` is `{ long, int }`: `long` is 64-bit on 64-bit Unix (LP64) only.
#[cfg(all(unix, target_pointer_width = "64"))]
loc_pairs!(i64 => MPI_LONG_INT);

/// The closure of a [`UserOp`]: `inout[i] = f(in[i], inout[i])`, as MPI defines it.
type Combine<T> = dyn Fn(&[T], &mut [T]) + Send + Sync;

/// A user-defined reduction operation over values of `T`, from a Rust closure; freed on drop.
///
/// The closure gets `(input, inout)` and must set each `inout[i]` to `input[i] ∘ inout[i]`,
/// where `input` holds values from lower ranks than `inout` when the operation is not
/// commutative. Pass `&op` wherever an [`Op`] is expected.
pub struct UserOp<'env, T: Equivalence> {
    op: ffi::MPI_Op,
    datatype: ffi::MPI_Datatype,
    /// The closure and the datatype's layout, behind a thin pointer stored as the datatype's
    /// attribute.
    state: *mut OpState<T>,
    _env: PhantomData<&'env Mpi>,
}

impl<T: Equivalence> std::fmt::Debug for UserOp<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserOp")
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

// SAFETY: the closure is `Send + Sync`; the handles are identifiers used only through gated
// calls (creation, free) or by MPI itself during reductions; `Drop` leaks when the gate refuses.
unsafe impl<T: Equivalence> Send for UserOp<'_, T> {}
// SAFETY: `&UserOp` only reads the handles; the closure is `Sync`.
unsafe impl<T: Equivalence> Sync for UserOp<'_, T> {}

impl<T: Equivalence> sealed::Sealed for &UserOp<'_, T> {}
impl<T: Equivalence> Op<T> for &UserOp<'_, T> {
    #[inline(always)]
    fn operand(&self) -> Operand {
        (**self).owned_operand()
    }
}

impl<T: Equivalence> sealed::Sealed for UserOp<'_, T> {}
/// By value, for persistent collectives, which keep the op until their request is freed.
impl<T: Equivalence> OwnedOp<T> for UserOp<'_, T> {
    #[inline(always)]
    fn owned_operand(&self) -> Operand {
        Operand {
            op: self.op,
            datatype: self.datatype,
            per_value: 1,
        }
    }
}

/// The keyval under which each [`UserOp`]'s datatype stores its closure; one per process.
static KEYVAL: OnceLock<c_int> = OnceLock::new();

// The three `extern "C"` functions below are callbacks MPI calls, not prototypes of MPI: passing
// them to `MPI_Type_create_keyval` and `MPI_Op_create` checks their signatures against the
// function-pointer types the generated bindings declare. The keyval callbacks also serve the
// large-count span ops (`comm::large::span_op`).

pub(crate) unsafe extern "C" fn no_copy(
    _old: ffi::MPI_Datatype,
    _keyval: c_int,
    _extra: *mut c_void,
    _value_in: *mut c_void,
    _value_out: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    // SAFETY: MPI passes a valid flag pointer. Duplicates of the datatype do not get the closure.
    unsafe { *flag = 0 };
    ffi::MPI_SUCCESS
}

pub(crate) unsafe extern "C" fn no_delete(
    _dt: ffi::MPI_Datatype,
    _keyval: c_int,
    _value: *mut c_void,
    _extra: *mut c_void,
) -> c_int {
    ffi::MPI_SUCCESS // the UserOp frees the closure itself
}

/// The keyval, created on first use. The caller holds the gate.
fn keyval() -> Result<c_int> {
    if let Some(&k) = KEYVAL.get() {
        return Ok(k);
    }
    let mut k: c_int = 0;
    // SAFETY: valid callbacks with the signatures MPI expects; writes the keyval.
    let rc = unsafe {
        ffi::MPI_Type_create_keyval(Some(no_copy), Some(no_delete), &mut k, std::ptr::null_mut())
    };
    check(rc, "op_create")?;
    Ok(*KEYVAL.get_or_init(|| k))
}

/// What the trampoline needs: the closure, and where the bytes of each value lie in MPI's
/// buffers.
struct OpState<T: Equivalence> {
    combine: Box<Combine<T>>,
    layout: ValueLayout,
}

/// Where one value's bytes lie in the buffers MPI hands a user function: value `i` starts at
/// `i * extent`, and only its bytes `true_lb .. true_lb + true_extent` are guaranteed to exist.
/// MPI sizes its temporaries as `true_extent + (n - 1) * extent` (MPI-4.0 §5.1.8), so for a type
/// whose type map leaves tail padding uncovered (`Loc<f64>`: 16 bytes, `MPI_DOUBLE_INT` true
/// extent 12) the last value is cut short, and a `&[T]` of `n` values would run past the buffer.
#[derive(Debug, Clone, Copy)]
struct ValueLayout {
    true_lb: usize,
    true_extent: usize,
    extent: usize,
}

impl ValueLayout {
    /// The layout of a committed datatype. The caller holds the gate.
    fn of(datatype: ffi::MPI_Datatype, operation: &'static str) -> Result<ValueLayout> {
        let (mut lb, mut extent, mut true_lb, mut true_extent) = (0, 0, 0, 0);
        // SAFETY: a valid committed datatype; each call writes two `MPI_Aint`s.
        unsafe {
            check(
                ffi::MPI_Type_get_extent(datatype, &mut lb, &mut extent),
                operation,
            )?;
            check(
                ffi::MPI_Type_get_true_extent(datatype, &mut true_lb, &mut true_extent),
                operation,
            )?;
        }
        let layout = (
            usize::try_from(true_lb),
            usize::try_from(true_extent),
            usize::try_from(extent),
        );
        match layout {
            (Ok(true_lb), Ok(true_extent), Ok(extent))
                if true_lb
                    .checked_add(true_extent)
                    .is_some_and(|end| end <= extent) =>
            {
                Ok(ValueLayout {
                    true_lb,
                    true_extent,
                    extent,
                })
            }
            _ => Err(ErrorKind::InvalidArgument {
                operation,
                reason: format!(
                    "a datatype whose true extent ({true_lb}, {true_extent}) lies outside its \
                     extent ({lb}, {extent})"
                ),
            }
            .into()),
        }
    }

    /// Whether `n` values of `T` are exactly `n * size_of::<T>()` bytes of MPI's buffers.
    fn is_dense<T>(self) -> bool {
        self.true_lb == 0 && self.true_extent == size_of::<T>() && self.extent == size_of::<T>()
    }
}

/// Called by MPI with `len` values of `T` (the op's datatype is one value).
///
/// Neither buffer is trusted to be a valid `[T]`: `invec` may be the caller's own send buffer
/// (Open MPI's `iallreduce` and `ireduce` pass it), which safe code lent read-only, perhaps in
/// read-only memory, so it is never written; values that need repair (`bool`) or whose type
/// map does not cover all their bytes are copied out first (see [`ValueLayout`]).
unsafe extern "C" fn trampoline<T: Equivalence>(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    datatype: *mut ffi::MPI_Datatype,
) {
    let outcome = std::panic::catch_unwind(|| {
        // MPI forbids MPI calls from here: the closure's calls through the crate are refused.
        let _callback = crate::gate::in_callback();
        let mut state: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        let keyval = *KEYVAL.get().expect("keyval exists once a UserOp exists");
        // SAFETY: MPI passes the datatype the reduction uses, which is this op's own datatype
        // carrying the state pointer (set before the op could be used).
        let rc = unsafe {
            ffi::MPI_Type_get_attr(*datatype, keyval, (&raw mut state).cast(), &mut flag)
        };
        assert!(
            rc == ffi::MPI_SUCCESS && flag != 0,
            "user op called with a datatype that is not its own"
        );
        // SAFETY: the attribute is the `*mut OpState<T>` of a live UserOp (it outlives every
        // reduction using it: they borrow it, or own it in a persistent request).
        let state = unsafe { &*state.cast::<OpState<T>>() };
        // SAFETY: MPI passes a valid `len`.
        let n = usize::try_from(unsafe { *len }).unwrap_or(0);
        // SAFETY: MPI passes two distinct buffers of `n` values of the op's datatype, laid out
        // as `state.layout` describes; `inoutvec` is writable.
        unsafe { combine_raw(state, invec.cast_const().cast(), inoutvec.cast(), n) };
    });
    if let Err(panic) = outcome {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        eprintln!(
            "ferrompi: a user-defined reduction operation panicked ({message}); aborting the MPI job"
        );
        crate::fault::abort_world(104);
    }
}

/// Calls the closure on MPI's buffers: directly when they are `n` dense, aligned, always-valid
/// values (the common case: no copy), else through aligned copies of the bytes the type map
/// covers, repaired before the closure sees them; only `inout` is written back.
///
/// # Safety
/// `input` and `inout` must be distinct buffers of `n` values laid out as `state.layout` says,
/// readable, `inout` writable; nothing else may access them during the call.
unsafe fn combine_raw<T: Equivalence>(
    state: &OpState<T>,
    input: *const u8,
    inout: *mut u8,
    n: usize,
) {
    let layout = state.layout;
    let direct = !T::NEEDS_REPAIR
        && layout.is_dense::<T>()
        && input.cast::<T>().is_aligned()
        && inout.cast::<T>().is_aligned();
    if direct {
        // SAFETY: `n` dense, aligned values each (checked above), every bit pattern of which is
        // valid (`!NEEDS_REPAIR`); distinct buffers, `inout` writable, `input` only read.
        unsafe {
            (state.combine)(
                std::slice::from_raw_parts(input.cast::<T>(), n),
                std::slice::from_raw_parts_mut(inout.cast::<T>(), n),
            );
        }
        return;
    }
    // SAFETY: per this function's contract.
    let a = unsafe { copy_values::<T>(layout, input, n) };
    // SAFETY: as above.
    let mut b = unsafe { copy_values::<T>(layout, inout, n) };
    (state.combine)(&a, &mut b);
    let value = b.as_ptr().cast::<u8>();
    for i in 0..n {
        // SAFETY: the covered bytes of value `i` exist in `inout` (per the layout) and in `b`
        // (`true_lb + true_extent <= extent == size_of::<T>()` for this op's datatype).
        unsafe {
            std::ptr::copy_nonoverlapping(
                value.add(i * size_of::<T>() + layout.true_lb),
                inout.add(i * layout.extent + layout.true_lb),
                layout.true_extent,
            );
        }
    }
}

/// Copies the covered bytes of `n` values out of an MPI buffer into zeroed, aligned values, and
/// repairs them (bytes the type map does not cover are `T`'s padding, left zero).
///
/// # Safety
/// `from` must hold `n` values laid out as `layout` says, readable; `layout.extent` must be
/// `size_of::<T>()` or the values' covered bytes must fit within `size_of::<T>()`.
unsafe fn copy_values<T: Equivalence>(layout: ValueLayout, from: *const u8, n: usize) -> Vec<T> {
    let mut values: Vec<T> = Vec::with_capacity(n);
    let to = values.as_mut_ptr().cast::<u8>();
    // SAFETY: `values` has room for `n` values; the zeroed bytes are overwritten with the covered
    // bytes of each value (within `size_of::<T>()`, per the contract) and then repaired, so all
    // `n` are valid values before `set_len`.
    unsafe {
        std::ptr::write_bytes(to, 0, n * size_of::<T>());
        for i in 0..n {
            std::ptr::copy_nonoverlapping(
                from.add(i * layout.extent + layout.true_lb),
                to.add(i * size_of::<T>() + layout.true_lb),
                layout.true_extent,
            );
        }
        T::repair_received(values.as_mut_ptr(), n);
        values.set_len(n);
    }
    values
}

impl<'env, T: Equivalence> UserOp<'env, T> {
    /// A commutative operation: MPI may combine values in any order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::UserOp;
    /// // Elementwise maximum of absolute values.
    /// let absmax = UserOp::<f64>::commutative(&mpi, |input, inout| {
    ///     for (a, b) in input.iter().zip(inout.iter_mut()) {
    ///         *b = b.abs().max(a.abs());
    ///     }
    /// })?;
    /// let mut got = [0.0f64];
    /// world.allreduce(&[-f64::from(world.rank() + 1)], &mut got, &absmax)?;
    /// assert_eq!(got[0].abs(), f64::from(world.size())); // one rank: its own value, unchanged
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn commutative(
        mpi: &'env Mpi,
        combine: impl Fn(&[T], &mut [T]) + Send + Sync + 'static,
    ) -> Result<Self> {
        UserOp::create(mpi, Box::new(combine), true)
    }

    /// A non-commutative (but associative) operation: MPI combines in rank order.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::UserOp;
    /// // Keep the left operand: the result is rank 0's value (MPI combines in rank order).
    /// let first = UserOp::<i32>::non_commutative(&mpi, |input, inout| inout.copy_from_slice(input))?;
    /// let mut got = [0i32];
    /// world.allreduce(&[world.rank()], &mut got, &first)?;
    /// assert_eq!(got, [0]);
    /// assert!(!first.is_commutative()?);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`UserOp::commutative`].
    pub fn non_commutative(
        mpi: &'env Mpi,
        combine: impl Fn(&[T], &mut [T]) + Send + Sync + 'static,
    ) -> Result<Self> {
        UserOp::create(mpi, Box::new(combine), false)
    }

    fn create(_mpi: &'env Mpi, combine: Box<Combine<T>>, commute: bool) -> Result<Self> {
        const OP: &str = "op_create";
        let per_value = crate::datatype::count_of::<T>(1, OP)?;
        let _gate = enter(OP)?;
        let keyval = keyval()?;
        // SAFETY: (whole block) standard datatype and op constructors on valid arguments; each
        // handle is checked before the next step uses it, and freed again on failure.
        unsafe {
            let mut datatype = ffi::MPI_DATATYPE_NULL;
            check(
                ffi::MPI_Type_contiguous(per_value, T::datatype().as_raw(), &mut datatype),
                OP,
            )?;
            let free_type = |mut t: ffi::MPI_Datatype| {
                let _ = ffi::MPI_Type_free(&mut t);
            };
            if let Err(e) = check(ffi::MPI_Type_commit(&mut datatype), OP) {
                free_type(datatype);
                return Err(e);
            }
            let layout = match ValueLayout::of(datatype, OP) {
                Ok(layout) if layout.extent == size_of::<T>() => layout,
                Ok(layout) => {
                    free_type(datatype);
                    return Err(ErrorKind::InvalidArgument {
                        operation: OP,
                        reason: format!(
                            "the datatype of {} has extent {}, not its size {}",
                            std::any::type_name::<T>(),
                            layout.extent,
                            size_of::<T>()
                        ),
                    }
                    .into());
                }
                Err(e) => {
                    free_type(datatype);
                    return Err(e);
                }
            };
            let state = Box::into_raw(Box::new(OpState { combine, layout }));
            if let Err(e) = check(ffi::MPI_Type_set_attr(datatype, keyval, state.cast()), OP) {
                free_type(datatype);
                drop(Box::from_raw(state));
                return Err(e);
            }
            let mut op = ffi::MPI_OP_NULL;
            if let Err(e) = check(
                ffi::MPI_Op_create(Some(trampoline::<T>), c_int::from(commute), &mut op),
                OP,
            ) {
                free_type(datatype);
                drop(Box::from_raw(state));
                return Err(e);
            }
            crate::live::made(crate::live::Kind::Op);
            Ok(UserOp {
                op,
                datatype,
                state,
                _env: PhantomData,
            })
        }
    }
}

impl<T: Equivalence> UserOp<'_, T> {
    /// Whether this op was created [commutative](UserOp::commutative) (`MPI_Op_commutative`,
    /// MPI-4.0 §6.9.7).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::UserOp;
    /// let sum = UserOp::<u8>::commutative(&mpi, |input, inout| {
    ///     for (a, b) in input.iter().zip(inout.iter_mut()) {
    ///         *b = b.wrapping_add(*a);
    ///     }
    /// })?;
    /// assert!(sum.is_commutative()?); // MPI_Op_commutative
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn is_commutative(&self) -> Result<bool> {
        op_commutative(self.op)
    }
}

impl<T: Equivalence> Drop for UserOp<'_, T> {
    fn drop(&mut self) {
        let Ok(_gate) = enter("op_free") else {
            return; // leak everything: MPI may still hold the op
        };
        // SAFETY: our op and datatype; every reduction using them borrowed `self` and has
        // completed. The closure is freed after MPI lets go of both.
        unsafe {
            let op_freed = ffi::MPI_Op_free(&mut self.op) == ffi::MPI_SUCCESS;
            let type_freed = ffi::MPI_Type_free(&mut self.datatype) == ffi::MPI_SUCCESS;
            if op_freed && type_freed {
                drop(Box::from_raw(self.state));
                crate::live::freed(crate::live::Kind::Op);
            }
        }
    }
}
