//! Datatypes: which Rust types travel in MPI messages, and as what (MPI-4.0 §3.2.2, §5.1).
//!
//! [`Equivalence`] is the one bound every buffer of the crate uses. A value of an `Equivalence`
//! type is [`Equivalence::ELEMENTS`] elements of one MPI datatype: for numbers, arrays and
//! bytes a predefined one, so `[f64; 3]` is three `MPI_DOUBLE`s and a [`Bytes<T>`] of a
//! `bytemuck::Pod` type is `size_of::<T>()` `MPI_BYTE`s (nothing to create or cache, and a
//! reduction over `[f64; 3]` is element-wise, as it should be); for a derived struct, one
//! element of its own struct datatype, made once ([`cache`]).
//!
//! | Rust | MPI datatype |
//! |---|---|
//! | `i8`, `i16`, `i32`, `i64`, `isize` | `MPI_INT8_T` … `MPI_INT64_T` |
//! | `u8`, `u16`, `u32`, `u64`, `usize` | `MPI_UINT8_T` … `MPI_UINT64_T` |
//! | `f32`, `f64` | `MPI_FLOAT`, `MPI_DOUBLE` |
//! | `bool` | `MPI_C_BOOL` (where the MPI defines it) |
//! | `[T; N]` | `N ×` that of `T` |
//! | [`Bytes<T>`] for `T: bytemuck::Pod` | `size_of::<T>() ×` `MPI_BYTE` |
//! | a struct with `#[derive(Equivalence)]` | its fields' datatypes at their offsets ([`cache`]) |
//! | the same with `#[equivalence(elementwise)]` | `ELEMENTS ×` its fields' one element type ([`Elementwise`]) |
//!
//! # Structured data
//!
//! Beyond runs of one type, MPI describes memory with *derived datatypes* (MPI-4.0 §5.1):
//!
//! - **Structs**: `#[derive(Equivalence)]` (feature `derive`, on by default) makes a struct an
//!   [`Equivalence`] type whose datatype is `MPI_Type_create_struct` over its fields at their
//!   real offsets, resized to the struct's size. Padding is never sent, and a receive never
//!   writes it. Such a struct then travels wherever an `f64` does: every send, receive and
//!   collective, blocking, nonblocking and persistent, windows, and [`UserOp`](crate::UserOp)
//!   reductions. A struct whose fields are all of one number type, with no padding, can be
//!   derived with `#[equivalence(elementwise)]` instead: it then travels as a run of that
//!   number's predefined datatype (no derived type at all), and the predefined reductions
//!   (`Sum`, `Max`, ...) and one-sided accumulates apply to it field by field ([`Elementwise`]).
//!   On a struct of mixed fields they do not compile.
//! - **Layouts within a buffer**: a [`DerivedType`] (vector, indexed, subarray, darray, struct,
//!   resized, ...) selects parts of a slice, such as a matrix's column or a 3-D block's face.
//!   [`DerivedType::view`] and [`DerivedType::view_mut`] check, before any MPI call, that every
//!   byte the type reaches, `count` times over, lies inside the slice; the checked [`View`] and
//!   [`ViewMut`] then go to the operations that take them; [`DerivedType::owned_view`] lays a
//!   type over a buffer a persistent request will own ([`OwnedView`](crate::OwnedView));
//!   [`DerivedType::blocks`] and [`DerivedType::blocks_mut`] lay it as per-rank blocks for the
//!   `v` collectives, [`LayoutBlocks`] and [`LayoutBlocksMut`] blocks each of its own type for
//!   `alltoallw_view`.
//! - **Packing**: [`Communicator::pack`](crate::Communicator::pack) and its kin copy any of
//!   these into a byte buffer and back ([`pack`]).
//!
//! | operation | a slice of `Equivalence` values (derived structs too) | a [`View`] / [`ViewMut`] |
//! |---|---|---|
//! | blocking point-to-point (`send`, `ssend`, `recv`, `sendrecv`, ...) | yes | `send_view`, `ssend_view`, `recv_view`, `sendrecv_view` |
//! | nonblocking and persistent point-to-point | yes | `isend_view`, `irecv_view` (in a scope); `send_init_view`, `recv_init_view` (an [`OwnedView`](crate::OwnedView): a layout over the buffer the request owns) |
//! | collectives: blocking, nonblocking, persistent, `v` variants | yes | `bcast_view`, `gather_view`, `scatter_view`, `allgather_view`, `alltoall_view`, their nonblocking `i…_view` and persistent `…_init_view` forms; `gatherv_view`, `scatterv_view`, `allgatherv_view`, `alltoallv_view`, their `i` forms on per-rank [`Blocks`] / [`BlocksMut`] (checked that no two receive blocks share a byte) and their persistent `…_init_view` forms on [`OwnedBlocks`](crate::OwnedBlocks); `alltoallw_view`, `ialltoallw_view` on [`LayoutBlocks`] / [`LayoutBlocksMut`], each block its own layout, and `alltoallw_init_view` on [`OwnedLayoutBlocks`](crate::OwnedLayoutBlocks) |
//! | reductions | with an [`Op`](crate::op::Op) for the type: predefined on [`Elementwise`] types (numbers, arrays, elementwise structs), [`UserOp`](crate::UserOp) on anything | – |
//! | one-sided (`Window<T>`) | yes (`T` with no invalid bit patterns) | `put_view`, `get_view` and their `_now` forms, on an epoch and on one of its targets ([`EpochTarget`](crate::window::EpochTarget)): a view at the origin, a layout at the target checked against its window |
//! | shared memory (`SharedWindow<T>`) | its segments are slices: any operation above takes them, views included | as for any slice: a view over a segment an epoch hands out |
//! | `pack`, `unpack` | yes | yes |
//! | `pack_external`, `unpack_external` | yes (derived structs on Open MPI only) | on Open MPI only |

pub(crate) mod blocks;
pub mod cache;
pub(crate) mod decode;
mod derived;
mod footprint;
pub mod pack;
mod view;

pub use blocks::{Blocks, BlocksMut, LayoutBlock, LayoutBlocks, LayoutBlocksMut};
pub use cache::{Field, TypeCache, cached_by_type, struct_datatype};
pub use decode::{Combiner, ContentType, Contents, Envelope};
pub use derived::{Bounds, DerivedType, Distribution, Order, TypeRef};
pub use view::{View, ViewMut};

use crate::error::{Error, ErrorKind, Result};
use crate::ffi;
use std::ffi::{c_int, c_void};
use std::sync::atomic::AtomicU64;

/// A committed MPI datatype handle that lives as long as MPI does: a predefined one, or the
/// one a derived [`Equivalence`] type made and keeps ([`cache`]; finalize frees those). Copyable;
/// a [`DerivedType`] is the owned kind, freed when dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub struct Datatype {
    raw: ffi::MPI_Datatype,
}

// SAFETY: a committed datatype that lives until finalize (predefined, or kept by a cache) is an
// immutable, process-wide identifier (a pointer in Open MPI, an int in MPICH); any thread may
// name it, and the thread gate refuses every call after finalize.
unsafe impl Send for Datatype {}
// SAFETY: as for `Send`; `Datatype` has no interior mutability.
unsafe impl Sync for Datatype {}

impl Datatype {
    /// `MPI_DATATYPE_NULL`: what a derived type's [`Equivalence::datatype`] returns when its
    /// datatype cannot be made (MPI not running, or refused on this thread; see
    /// [`TypeCache::get_or_build`]). No operation of the crate passes it to MPI on the thread
    /// that got it: they are refused for the same reason first.
    pub const NULL: Datatype = Datatype {
        raw: ffi::MPI_DATATYPE_NULL,
    };

    /// Wraps a raw handle.
    ///
    /// # Safety
    /// `raw` must be a valid, committed MPI datatype that stays valid for as long as the returned
    /// value (or any copy) is used, such as a predefined one.
    pub const unsafe fn from_raw(raw: ffi::MPI_Datatype) -> Datatype {
        Datatype { raw }
    }

    /// The raw handle, for calling `ffi` directly.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::Equivalence;
    /// let raw: ferrompi::ffi::MPI_Datatype = f64::datatype().as_raw(); // MPI_DOUBLE
    /// let _ = raw;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn as_raw(self) -> ffi::MPI_Datatype {
        self.raw
    }
}

/// A Rust type with an MPI datatype equivalent.
///
/// # Safety
/// Implementors promise that:
/// - a value of `Self` occupies exactly `size_of::<Self>()` bytes, laid out as
///   [`ELEMENTS`](Self::ELEMENTS) consecutive elements of [`datatype`](Self::datatype), whose
///   extent is `size_of::<Self>() / ELEMENTS`, so that MPI reading or writing `len * ELEMENTS`
///   elements at a `*const Self` of `len` values stays within them. Bytes the datatype's type map
///   does not cover (the C tail padding of MPI's pair types such as `MPI_DOUBLE_INT`) are never
///   read or written by MPI;
/// - after MPI has written arbitrary bytes into values of `Self`, calling
///   [`repair_received`](Self::repair_received) on them leaves only valid values. For types where
///   every bit pattern is valid (integers, floats, `bytemuck::Pod` types) the default no-op does
///   this;
/// - [`NEEDS_REPAIR`](Self::NEEDS_REPAIR) is `true` unless every bit pattern of
///   `size_of::<Self>()` bytes is a valid `Self`. The crate relies on `false` meaning exactly
///   that: it then skips `repair_received` after nonblocking receives, hands MPI's buffers to
///   user-defined reductions without copying, and allows a [`Window`](crate::Window) of `Self`
///   (zeroed, and written by any rank). A type that overrides `repair_received` must therefore
///   set it to `true`, as `bool` does;
/// - [`PREDEFINED`](Self::PREDEFINED) is `false` when [`datatype`](Self::datatype) is not a
///   predefined MPI datatype.
///
/// Structs get it with `#[derive(Equivalence)]` (feature `derive`): one value is one element
/// of a struct datatype whose extent is the struct's size, and whose type map holds the fields
/// only, never the padding (see [`cache`]).
///
/// ```
/// # #[cfg(feature = "derive")] {
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// use ferrompi::Equivalence;
/// #[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Particle {
///     position: [f64; 3],
///     velocity: [f64; 3],
///     id: u32, // followed by 4 bytes of padding, never sent
///     alive: bool,
/// }
/// let me = world.rank();
/// let out = [Particle { position: [1.0, 2.0, 3.0], velocity: [0.5; 3], id: 7, alive: true }; 2];
/// let mut back = [Particle { position: [0.0; 3], velocity: [0.0; 3], id: 0, alive: false }; 2];
/// world.sendrecv(&out, me, 0, &mut back, me, 0)?;
/// assert_eq!(back, out);
/// # }
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot travel in an MPI message: it is not `Equivalence`",
    label = "no MPI datatype for `{Self}`",
    note = "numbers, `bool`, arrays of them, `Bytes<T: Pod>` and structs with `#[derive(Equivalence)]` are; references, pointers, `char`, enums and unions are not"
)]
pub unsafe trait Equivalence: Copy + 'static {
    /// How many elements of [`Self::datatype`] make one value.
    const ELEMENTS: usize;

    /// The predefined MPI datatype of one element.
    fn datatype() -> Datatype;

    /// Whether [`datatype`](Self::datatype) is a predefined MPI datatype (`true`, the default)
    /// or a derived one (`false`: `#[derive(Equivalence)]` structs). One-sided accumulates
    /// (`accumulate`, `get_accumulate`, `fetch_and_op`) refuse derived types: MPI defines them
    /// only on one predefined type, and MPICH aborts the process on a struct of mixed types.
    /// A hand-written implementation whose datatype is derived must set it to `false`.
    const PREDEFINED: bool = true;

    /// Whether some bit pattern is not a valid `Self`, so that received values need
    /// [`repair_received`](Self::repair_received). `false` (the default) promises that every bit
    /// pattern is valid; see the trait's `# Safety` section. Lets nonblocking receives skip
    /// remembering the repair for the (common) types that need none.
    const NEEDS_REPAIR: bool = false;

    /// Turns whatever bytes MPI wrote into valid values. Called by every receive, before the
    /// buffer is given back, including on error (a truncated message may be partly written),
    /// but only when [`NEEDS_REPAIR`](Self::NEEDS_REPAIR) is `true` after a nonblocking one.
    ///
    /// # Safety
    /// `ptr` must point to `len` values of `Self` that are writable and that no reference
    /// observes during the call (their bytes may not be valid values yet).
    #[inline(always)]
    unsafe fn repair_received(ptr: *mut Self, len: usize) {
        let _ = (ptr, len);
    }
}

/// A type whose value is [`Equivalence::ELEMENTS`] values of one predefined element type, end
/// to end: numbers, `bool`, [`Loc`](crate::op::Loc) pairs, arrays of them, and structs derived
/// with `#[derive(Equivalence)]` and `#[equivalence(elementwise)]` whose fields are all of one
/// element type with no padding. MPI's predefined reductions (`Sum`, `Max`, ...) apply to
/// these element by element (MPI-4.0 §6.9.2 defines them on predefined types only, which is
/// what such a value is to MPI), and one-sided accumulates take them.
///
/// ```
/// # #[cfg(feature = "derive")] {
/// # let mpi = ferrompi::Mpi::init()?;
/// # let world = mpi.world();
/// use ferrompi::{Equivalence, op::Sum};
/// #[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
/// #[equivalence(elementwise)] // three f64s to MPI: MPI_SUM adds them one by one
/// struct Momentum {
///     x: f64,
///     y: f64,
///     z: f64,
/// }
/// let mine = [Momentum { x: 1.0, y: 2.0, z: 3.0 }];
/// let mut total = [Momentum { x: 0.0, y: 0.0, z: 0.0 }];
/// world.allreduce(&mine, &mut total, Sum)?;
/// let n = f64::from(world.size());
/// assert_eq!(total[0], Momentum { x: n, y: 2.0 * n, z: 3.0 * n });
/// # }
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// A struct of mixed fields is not `Elementwise`, and a predefined op on it does not compile
/// (reduce it with a [`UserOp`](crate::UserOp)):
///
/// ```compile_fail
/// # let mpi = ferrompi::Mpi::init().unwrap();
/// # let world = mpi.world();
/// #[derive(ferrompi::Equivalence, Clone, Copy)]
/// struct Sample { value: f64, count: u32 }
/// let (mine, mut total) = ([Sample { value: 1.0, count: 1 }], [Sample { value: 0.0, count: 0 }]);
/// world.allreduce(&mine, &mut total, ferrompi::op::Sum).unwrap();
/// ```
///
/// # Safety
/// A value of `Self` is exactly `Self::ELEMENTS` values of `Self::Element` laid end to end
/// (`size_of::<Self>() == Self::ELEMENTS * size_of::<Self::Element>()`), `Self::datatype()`
/// is `Self::Element::datatype()`, a predefined datatype, and `Self::Element` is itself
/// `Elementwise` with `Element = Self::Element` and one element per value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a run of one predefined element type, so MPI's predefined ops cannot reduce it",
    label = "not `Elementwise`",
    note = "numbers, `bool`, `Loc` pairs, arrays of them and structs derived with `#[equivalence(elementwise)]` (every field of one element type, no padding) are; reduce other structs with a `UserOp`"
)]
pub unsafe trait Elementwise: Equivalence {
    /// The predefined element a value is made of (`f64` for `[f64; 3]`).
    type Element: Elementwise<Element = Self::Element>;
}

macro_rules! equivalence {
    ($($ty:ty => $konst:ident),* $(,)?) => {$(
        // SAFETY: the type is a primitive of the same size as the MPI datatype named (exact-width
        // or IEEE types), one element per value, and every bit pattern of it is valid.
        unsafe impl Equivalence for $ty {
            const ELEMENTS: usize = 1;
            #[inline(always)]
            fn datatype() -> Datatype {
                // SAFETY: a predefined datatype (`ffi`'s handle constants), valid while MPI is.
                unsafe { Datatype::from_raw(ffi::$konst) }
            }
        }
        // SAFETY: one value of a predefined datatype, its own element.
        unsafe impl Elementwise for $ty {
            type Element = $ty;
        }
    )*};
}

equivalence! {
    i8 => MPI_INT8_T,
    i16 => MPI_INT16_T,
    i32 => MPI_INT32_T,
    i64 => MPI_INT64_T,
    u8 => MPI_UINT8_T,
    u16 => MPI_UINT16_T,
    u32 => MPI_UINT32_T,
    u64 => MPI_UINT64_T,
    f32 => MPI_FLOAT,
    f64 => MPI_DOUBLE,
}

#[cfg(target_pointer_width = "64")]
equivalence! { isize => MPI_INT64_T, usize => MPI_UINT64_T }
#[cfg(target_pointer_width = "32")]
equivalence! { isize => MPI_INT32_T, usize => MPI_UINT32_T }

// SAFETY: Rust's `bool` has the size and representation of C's `_Bool` (one byte, 0 or 1) on
// every platform Rust supports with a C ABI, which is what MPI_C_BOOL describes. Not every byte
// is a valid `bool`, so `repair_received` maps any non-zero byte a peer sent to `true`.
/// `MPI_C_BOOL`; present where `mpi.h` defines it (every MPI ferrompi is tested on). A received
/// byte other than 0 reads as `true`.
#[cfg(ferrompi_c_bool)]
unsafe impl Equivalence for bool {
    const ELEMENTS: usize = 1;
    const NEEDS_REPAIR: bool = true;
    #[inline(always)]
    fn datatype() -> Datatype {
        // SAFETY: a predefined datatype (`ffi`'s handle constants), valid while MPI is.
        unsafe { Datatype::from_raw(ffi::MPI_C_BOOL) }
    }

    unsafe fn repair_received(ptr: *mut Self, len: usize) {
        let bytes = ptr.cast::<u8>();
        for i in 0..len {
            // SAFETY: the caller guarantees `len` writable one-byte values at `ptr`; they are
            // accessed as `u8`, for which every byte is valid.
            unsafe {
                let byte = bytes.add(i);
                *byte = u8::from(*byte != 0);
            }
        }
    }
}

// SAFETY: `MPI_C_BOOL`, a predefined datatype, one element per value, its own element.
#[cfg(ferrompi_c_bool)]
unsafe impl Elementwise for bool {
    type Element = bool;
}

// SAFETY: `N` values of `T` end to end, each `T::ELEMENTS` elements of `T::Element`, with
// `T`'s (predefined) datatype.
unsafe impl<T: Elementwise, const N: usize> Elementwise for [T; N] {
    type Element = T::Element;
}

// SAFETY: `[T; N]` is `N` values of `T` with no padding between them, hence `N * T::ELEMENTS`
// elements of `T`'s datatype; repairing it repairs its `N * len` values of `T`.
unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {
    const ELEMENTS: usize = T::ELEMENTS * N;
    const PREDEFINED: bool = T::PREDEFINED;
    const NEEDS_REPAIR: bool = T::NEEDS_REPAIR;
    #[inline(always)]
    fn datatype() -> Datatype {
        T::datatype()
    }

    #[inline(always)]
    unsafe fn repair_received(ptr: *mut Self, len: usize) {
        // SAFETY: `len` arrays of `N` values of `T` are `len * N` contiguous values of `T`, and
        // that product fits in `usize` because the arrays exist in memory.
        unsafe { T::repair_received(ptr.cast::<T>(), len * N) }
    }
}

/// A `bytemuck::Pod` value that travels as its bytes (`MPI_BYTE`).
///
/// Use it for plain structs: `Bytes::wrap_slice(&points)` turns `&[Point]` into `&[Bytes<Point>]`
/// without copying (see [`bytemuck::TransparentWrapper`]). Messages are not converted between
/// architectures, so use it between processes of the same binary or at least the same ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Bytes<T>(pub T);

// SAFETY: `Bytes<T>` is `repr(transparent)` over `T`.
unsafe impl<T> bytemuck::TransparentWrapper<T> for Bytes<T> {}

// SAFETY: `T: Pod` has no padding and every bit pattern is valid, so a value is exactly
// `size_of::<T>()` arbitrary bytes; `Bytes<T>` is `repr(transparent)` over it.
unsafe impl<T: bytemuck::Pod> Equivalence for Bytes<T> {
    const ELEMENTS: usize = std::mem::size_of::<T>();
    #[inline(always)]
    fn datatype() -> Datatype {
        // SAFETY: a predefined datatype (`ffi`'s handle constants), valid while MPI is.
        unsafe { Datatype::from_raw(ffi::MPI_BYTE) }
    }
}

/// The MPI count for `len` values of `T`: `len * T::ELEMENTS` as a C `int`.
///
/// # Errors
/// [`ErrorKind::CountOverflow`] if it does not fit.
#[inline(always)]
pub(crate) fn count_of<T: Equivalence>(len: usize, operation: &'static str) -> Result<c_int> {
    match int_count::<T>(len) {
        Some(count) => Ok(count),
        None => Err(count_overflow(len, T::ELEMENTS, operation)),
    }
}

/// `len` values of `T` as MPI's `int` count of elements, when it fits.
#[inline(always)]
pub(crate) fn int_count<T: Equivalence>(len: usize) -> Option<c_int> {
    len.checked_mul(T::ELEMENTS)
        .and_then(|n| c_int::try_from(n).ok())
}

/// The error for `len` values of `per_value` elements not fitting MPI's `int`.
#[cold]
pub(crate) fn count_overflow(len: usize, per_value: usize, operation: &'static str) -> Error {
    let count = u64::try_from(len)
        .unwrap_or(u64::MAX)
        .saturating_mul(u64::try_from(per_value).unwrap_or(u64::MAX));
    ErrorKind::CountOverflow {
        operation,
        count,
        max: i64::from(c_int::MAX),
    }
    .into()
}

/// Where a zero-byte send buffer points MPI instead of its own dangling address.
///
/// An empty slice of a one-byte type points at address 1, which is `MPI_IN_PLACE` in Open MPI
/// (MPICH's is `(void *) -1`): passing it would turn an empty `bcast` into an in-place one. This
/// static is a real address that no implementation uses as a sentinel. MPI reads nothing
/// through it, since the count is 0.
static EMPTY_SEND: u64 = 0;

/// Where a zero-byte receive buffer points MPI: a different address from [`EMPTY_SEND`], since
/// MPICH rejects a collective whose send and receive buffers are the same address ("Buffers
/// must not be aliased"), even when both are empty. Writable memory, though MPI writes nothing
/// through it (the count is 0).
static EMPTY_RECV: AtomicU64 = AtomicU64::new(0);

/// A send address for a buffer MPI reads nothing from (see [`EMPTY_SEND`]).
#[inline(always)]
pub(crate) fn empty_send() -> *const c_void {
    (&raw const EMPTY_SEND).cast()
}

/// A receive address for a buffer MPI writes nothing to (see [`EMPTY_RECV`]).
#[inline(always)]
pub(crate) fn empty_recv() -> *mut c_void {
    EMPTY_RECV.as_ptr().cast()
}

/// The address MPI gets for a send buffer.
#[inline(always)]
pub(crate) fn send_ptr<T>(buf: &[T]) -> *const c_void {
    if std::mem::size_of_val(buf) == 0 {
        empty_send()
    } else {
        buf.as_ptr().cast()
    }
}

/// The address MPI gets for a receive buffer (see [`send_ptr`], [`EMPTY_RECV`]).
#[inline(always)]
pub(crate) fn recv_ptr<T>(buf: &mut [T]) -> *mut c_void {
    if std::mem::size_of_val(buf) == 0 {
        empty_recv()
    } else {
        buf.as_mut_ptr().cast()
    }
}

/// Repairs a received buffer (see [`Equivalence::repair_received`]).
#[inline(always)]
pub(crate) fn repair<T: Equivalence>(buf: &mut [T]) {
    // SAFETY: the slice is `len` writable values, exclusively borrowed for the call.
    unsafe { T::repair_received(buf.as_mut_ptr(), buf.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_multiply_and_check_overflow() {
        assert_eq!(count_of::<f64>(10, "t"), Ok(10));
        assert_eq!(count_of::<[f64; 3]>(10, "t"), Ok(30));
        assert_eq!(count_of::<Bytes<[u16; 4]>>(5, "t"), Ok(40));
        let max = usize::try_from(c_int::MAX).unwrap();
        assert_eq!(count_of::<u8>(max, "t"), Ok(c_int::MAX));
        assert!(matches!(
            count_of::<u8>(max + 1, "send").as_ref().map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { operation: "send", count, .. }) if *count == (max as u64) + 1
        ));
        assert!(matches!(
            count_of::<[u8; 2]>(max, "t")
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { .. })
        ));
        assert!(matches!(
            count_of::<[u8; 2]>(usize::MAX, "t")
                .as_ref()
                .map_err(crate::error::Error::kind),
            Err(ErrorKind::CountOverflow { .. })
        ));
    }

    #[cfg(ferrompi_c_bool)]
    #[test]
    fn bool_repair_makes_any_byte_valid() {
        let mut raw = [0u8, 1, 2, 255];
        // SAFETY: four writable bytes, viewed as bool only after repair.
        unsafe { bool::repair_received(raw.as_mut_ptr().cast::<bool>(), raw.len()) };
        assert_eq!(raw, [0, 1, 1, 1]);
        let mut arrays = [[7u8, 0], [0, 9]];
        // SAFETY: as above, for [bool; 2].
        unsafe { <[bool; 2]>::repair_received(arrays.as_mut_ptr().cast::<[bool; 2]>(), 2) };
        assert_eq!(arrays, [[1, 0], [0, 1]]);
    }
}
