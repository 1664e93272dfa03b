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

use crate::datatype::{Datatype, Equivalence};
use crate::env::{Mpi, enter};
use crate::error::{Result, check};
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

mod sealed {
    pub trait Sealed {}
}

/// A reduction operation applicable to values of `T`. Implemented by the predefined op types
/// for the types MPI defines them on, and by `&UserOp<T>`; sealed.
pub trait Op<T: Equivalence>: sealed::Sealed {
    /// The MPI op and datatype to reduce `T` with.
    #[doc(hidden)]
    fn operand(&self) -> Operand;
}

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

macro_rules! marker {
    ($(#[$doc:meta])* $name:ident: $($ty:ty),*) => {
        $(#[$doc])*
        pub trait $name: Equivalence + sealed::Sealed {}
        $( impl $name for $ty {} )*
        impl<T: $name, const N: usize> $name for [T; N] {}
    };
}

macro_rules! sealed_types {
    ($($ty:ty),*) => { $( impl sealed::Sealed for $ty {} )* };
}
sealed_types!(
    i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64, bool
);
impl<T: sealed::Sealed, const N: usize> sealed::Sealed for [T; N] {}

marker!(
    /// Types `MPI_SUM` and `MPI_PROD` are defined on: C integers and floating point.
    Arithmetic: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64
);
marker!(
    /// Types `MPI_MIN` and `MPI_MAX` are defined on: C integers and floating point.
    Ordered: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64
);
marker!(
    /// Types the logical ops are defined on: C integers and `bool` (`MPI_C_BOOL`).
    Logical: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool
);
marker!(
    /// Types the bitwise ops are defined on: C integers.
    Bitwise: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize
);

macro_rules! predefined {
    ($($(#[$doc:meta])* $name:ident = $konst:ident for $bound:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;
        impl sealed::Sealed for $name {}
        impl<T: $bound> Op<T> for $name {
            #[inline(always)]
            fn operand(&self) -> Operand {
                // SAFETY: an immutable predefined handle defined by the shim.
                let op = unsafe { ffi::$konst };
                Operand { op, datatype: T::datatype().as_raw(), per_value: T::ELEMENTS }
            }
        }
        impl<T: $bound> OwnedOp<T> for $name {
            #[inline(always)]
            fn owned_operand(&self) -> Operand {
                Op::<T>::operand(self)
            }
        }
    )*};
}

predefined! {
    /// `MPI_SUM`.
    Sum = ferrompi_MPI_SUM for Arithmetic;
    /// `MPI_PROD`.
    Prod = ferrompi_MPI_PROD for Arithmetic;
    /// `MPI_MIN`.
    Min = ferrompi_MPI_MIN for Ordered;
    /// `MPI_MAX`.
    Max = ferrompi_MPI_MAX for Ordered;
    /// `MPI_LAND`.
    LogicalAnd = ferrompi_MPI_LAND for Logical;
    /// `MPI_LOR`.
    LogicalOr = ferrompi_MPI_LOR for Logical;
    /// `MPI_LXOR`.
    LogicalXor = ferrompi_MPI_LXOR for Logical;
    /// `MPI_BAND`.
    BitAnd = ferrompi_MPI_BAND for Bitwise;
    /// `MPI_BOR`.
    BitOr = ferrompi_MPI_BOR for Bitwise;
    /// `MPI_BXOR`.
    BitXor = ferrompi_MPI_BXOR for Bitwise;
    /// `MPI_MINLOC`: the smallest value and the lowest index holding it.
    MinLoc = ferrompi_MPI_MINLOC for LocPair;
    /// `MPI_MAXLOC`: the largest value and the lowest index holding it.
    MaxLoc = ferrompi_MPI_MAXLOC for LocPair;
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
        impl sealed::Sealed for Loc<$v> {}
        impl LocPair for Loc<$v> {}
        // SAFETY: `Loc<V>` is `repr(C)` `{ V, int }`, the C struct MPI's pair datatype describes
        // (its type map covers the two fields; MPI never touches the trailing padding). One MPI
        // element per value; every bit pattern of both fields is valid.
        unsafe impl Equivalence for Loc<$v> {
            const ELEMENTS: usize = 1;
            #[inline(always)]
            fn datatype() -> Datatype {
                // SAFETY: an immutable predefined handle defined by the shim.
                unsafe { Datatype::from_raw(ffi::$konst) }
            }
        }
    )*};
}
loc_pairs!(f32 => ferrompi_MPI_FLOAT_INT, f64 => ferrompi_MPI_DOUBLE_INT, i32 => ferrompi_MPI_2INT);
// `MPI_LONG_INT` is `{ long, int }`: `long` is 64-bit on 64-bit Unix (LP64) only.
#[cfg(all(unix, target_pointer_width = "64"))]
loc_pairs!(i64 => ferrompi_MPI_LONG_INT);

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
    /// The closure, behind a thin pointer stored as the datatype's attribute.
    combine: *mut Box<Combine<T>>,
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

/// Called by MPI with `len` values of `T` (the op's datatype is one value).
unsafe extern "C" fn trampoline<T: Equivalence>(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    datatype: *mut ffi::MPI_Datatype,
) {
    let outcome = std::panic::catch_unwind(|| {
        let mut state: *mut c_void = std::ptr::null_mut();
        let mut flag: c_int = 0;
        let keyval = *KEYVAL.get().expect("keyval exists once a UserOp exists");
        // SAFETY: MPI passes the datatype the reduction uses, which is this op's own datatype
        // carrying the closure pointer (set before the op could be used).
        let rc = unsafe {
            ffi::MPI_Type_get_attr(*datatype, keyval, (&raw mut state).cast(), &mut flag)
        };
        assert!(
            rc == ffi::MPI_SUCCESS && flag != 0,
            "user op called with a datatype that is not its own"
        );
        // SAFETY: the attribute is the `*mut Box<Combine<T>>` of a live UserOp (it outlives every
        // reduction using it: they borrow it).
        let combine = unsafe { &*state.cast::<Box<Combine<T>>>() };
        // SAFETY: MPI passes `len` values of `T` in two distinct buffers.
        let n = usize::try_from(unsafe { *len }).unwrap_or(0);
        combine_aligned(combine, invec.cast(), inoutvec.cast(), n);
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
        crate::env::abort_world(104);
    }
}

/// Calls the closure on MPI's buffers, copying through aligned storage if MPI's are not aligned
/// for `T` (MPI guarantees nothing about the alignment of its temporary buffers).
fn combine_aligned<T: Equivalence>(combine: &Combine<T>, input: *const T, inout: *mut T, n: usize) {
    let aligned = input.is_aligned() && inout.is_aligned();
    if aligned {
        // SAFETY: aligned, `n` values each, distinct buffers; bytes written by MPI from values of
        // `T` are repaired to valid values first.
        unsafe {
            T::repair_received(input.cast_mut(), n);
            T::repair_received(inout, n);
            combine(
                std::slice::from_raw_parts(input, n),
                std::slice::from_raw_parts_mut(inout, n),
            );
        }
    } else {
        let mut a: Vec<T> = Vec::with_capacity(n);
        let mut b: Vec<T> = Vec::with_capacity(n);
        // SAFETY: copies `n` values' bytes into aligned storage, repairs them, then copies the
        // result back; the vectors have capacity `n`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                input.cast::<u8>(),
                a.as_mut_ptr().cast::<u8>(),
                n * size_of::<T>(),
            );
            std::ptr::copy_nonoverlapping(
                inout.cast::<u8>(),
                b.as_mut_ptr().cast::<u8>(),
                n * size_of::<T>(),
            );
            T::repair_received(a.as_mut_ptr(), n);
            T::repair_received(b.as_mut_ptr(), n);
            a.set_len(n);
            b.set_len(n);
        }
        combine(&a, &mut b);
        // SAFETY: `b` holds `n` values; `inout` has room for them.
        unsafe {
            std::ptr::copy_nonoverlapping(
                b.as_ptr().cast::<u8>(),
                inout.cast::<u8>(),
                n * size_of::<T>(),
            )
        };
    }
}

impl<'env, T: Equivalence> UserOp<'env, T> {
    /// A commutative operation: MPI may combine values in any order.
    ///
    /// # Errors
    /// [`Error::WrongThread`](crate::Error::WrongThread); [`Error::Mpi`](crate::Error::Mpi).
    pub fn commutative(
        mpi: &'env Mpi,
        combine: impl Fn(&[T], &mut [T]) + Send + Sync + 'static,
    ) -> Result<Self> {
        UserOp::create(mpi, Box::new(combine), true)
    }

    /// A non-commutative (but associative) operation: MPI combines in rank order.
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
        let keyval = keyval()?;
        let _gate = enter(OP)?;
        // SAFETY: (whole block) standard datatype and op constructors on valid arguments; each
        // handle is checked before the next step uses it, and freed again on failure.
        unsafe {
            let mut datatype = ffi::ferrompi_MPI_DATATYPE_NULL;
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
            let state: *mut Box<Combine<T>> = Box::into_raw(Box::new(combine));
            if let Err(e) = check(ffi::MPI_Type_set_attr(datatype, keyval, state.cast()), OP) {
                free_type(datatype);
                drop(Box::from_raw(state));
                return Err(e);
            }
            let mut op = ffi::ferrompi_MPI_OP_NULL;
            if let Err(e) = check(
                ffi::MPI_Op_create(Some(trampoline::<T>), c_int::from(commute), &mut op),
                OP,
            ) {
                free_type(datatype);
                drop(Box::from_raw(state));
                return Err(e);
            }
            Ok(UserOp {
                op,
                datatype,
                combine: state,
                _env: PhantomData,
            })
        }
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
                drop(Box::from_raw(self.combine));
            }
        }
    }
}
