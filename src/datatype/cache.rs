//! The committed datatype of a struct type, made once and found again without a lock, a map
//! lookup or an allocation: what `#[derive(Equivalence)]` builds on.
//!
//! A struct's datatype is `MPI_Type_create_struct` over its fields, each at its real offset
//! (`offset_of!`), resized so that its extent is the struct's size (MPI-4.0 §5.1.2, §5.1.7):
//! padding is in no field, so MPI never sends it and never writes it. It is made the first
//! time [`Equivalence::datatype`] asks for it, committed, and kept for as long as MPI runs:
//! finalize frees every one just before `MPI_Finalize` (MPICH reports datatypes still alive
//! there), after which the thread gate refuses every call that could use them.
//!
//! - A struct that is not generic keeps it in a `static` [`TypeCache`] of its own: finding it
//!   is one atomic load and a test, as for a `OnceLock`.
//! - A generic struct (`Point<T>`) cannot: Rust has no `static` per instantiation of a generic
//!   type. [`cached_by_type`] keeps those in a fixed table probed by the `TypeId`'s hash,
//!   without a lock: a few loads and compares more than a `static`, no allocation. A table
//!   that fills up (more than [`GENERIC_SLOTS`] generic instantiations sent in one program)
//!   keeps the rest in a list read under a mutex: correct, slower.

use super::{Datatype, Equivalence};
use crate::env::enter;
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::any::TypeId;
use std::ffi::c_int;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// One field of a struct: its offset, and the [`Equivalence`] of its type (what the derive
/// passes [`struct_datatype`] for each field).
#[derive(Debug, Clone, Copy)]
pub struct Field {
    offset: usize,
    elements: usize,
    size: usize,
    datatype: Datatype,
}

impl Field {
    /// A field of type `F` at `offset` bytes from the start of its struct (`offset_of!`).
    #[inline]
    pub fn of<F: Equivalence>(offset: usize) -> Field {
        Field {
            offset,
            elements: F::ELEMENTS,
            size: std::mem::size_of::<F>(),
            datatype: F::datatype(),
        }
    }
}

/// The datatype of a struct `S` made of `fields` (`MPI_Type_create_struct`, resized to
/// `size_of::<S>()` and committed; MPI-4.0 §5.1.2, §5.1.7), kept until finalize frees it:
/// made once per type by a cache, not per call.
///
/// ```
/// # let mpi = ferrompi::Mpi::init()?;
/// use ferrompi::datatype::{Field, struct_datatype};
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Sample { value: f64, id: u32 } // 4 bytes of padding at the end
/// let made = struct_datatype::<Sample>(&[
///     Field::of::<f64>(std::mem::offset_of!(Sample, value)),
///     Field::of::<u32>(std::mem::offset_of!(Sample, id)),
/// ])?;
/// # let _ = made;
/// # Ok::<(), ferrompi::Error>(())
/// ```
///
/// # Errors
/// [`ErrorKind::InvalidArgument`] if a field reaches past `size_of::<S>()`, has more elements
/// than an `int` counts, or its type has no datatype now (MPI not running, or refused on
/// this thread); [`ErrorKind::WrongThread`], [`ErrorKind::NotInitialized`]; [`ErrorKind::Mpi`].
pub fn struct_datatype<S>(fields: &[Field]) -> Result<Datatype> {
    const OP: &str = "struct_datatype";
    let size = std::mem::size_of::<S>();
    let mut lengths = Vec::with_capacity(fields.len());
    let mut offsets = Vec::with_capacity(fields.len());
    let mut types = Vec::with_capacity(fields.len());
    for field in fields {
        let reason = if field
            .offset
            .checked_add(field.size)
            .is_none_or(|end| end > size)
        {
            Some(format!(
                "a field of {} bytes at offset {} is outside the struct's {size} bytes",
                field.size, field.offset
            ))
        } else if field.datatype == Datatype::NULL {
            Some("a field's type has no datatype (MPI is not running on this thread)".into())
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason,
            }
            .into());
        }
        lengths.push(
            c_int::try_from(field.elements)
                .map_err(|_| super::count_overflow(1, field.elements, OP))?,
        );
        // An offset within an object's size fits `isize`, hence MPI_Aint.
        offsets.push(field.offset as ffi::MPI_Aint);
        types.push(field.datatype.as_raw());
    }
    let count =
        c_int::try_from(fields.len()).map_err(|_| super::count_overflow(fields.len(), 1, OP))?;
    let _gate = enter(OP)?;
    let mut joined = ffi::MPI_DATATYPE_NULL;
    // SAFETY: three arrays of `count` entries; the types are committed datatypes MPI knows
    // (predefined, or cached until finalize); MPI writes one handle.
    let rc = unsafe {
        ffi::MPI_Type_create_struct(
            count,
            lengths.as_ptr(),
            offsets.as_ptr(),
            types.as_ptr(),
            &mut joined,
        )
    };
    check(rc, OP)?;
    let mut whole = ffi::MPI_DATATYPE_NULL;
    // SAFETY: `joined` is the type just made; the struct's size fits `isize`.
    let rc = unsafe { ffi::MPI_Type_create_resized(joined, 0, size as ffi::MPI_Aint, &mut whole) };
    // SAFETY: `joined` is ours and no longer needed (the resized type keeps what it uses).
    unsafe { ffi::MPI_Type_free(&mut joined) };
    check(rc, OP)?;
    // SAFETY: `whole` is the type just made.
    if let Err(e) = check(unsafe { ffi::MPI_Type_commit(&mut whole) }, OP) {
        // SAFETY: ours, never handed out.
        unsafe { ffi::MPI_Type_free(&mut whole) };
        return Err(e);
    }
    // Kept for the life of MPI: finalize frees it (`live`), nothing before.
    crate::live::datatype_kept(whole);
    // SAFETY: committed, and never freed before finalize (above).
    Ok(unsafe { Datatype::from_raw(whole) })
}

/// The place a non-generic type keeps its committed datatype (see the module docs): the
/// handle's bits in one atomic word, 0 until it is made (no MPI has a datatype handle of 0:
/// Open MPI's are addresses, MPICH's carry a kind tag in their high bits).
///
/// ```
/// use ferrompi::datatype::TypeCache;
/// static CACHE: TypeCache = TypeCache::new();
/// # let mpi = ferrompi::Mpi::init()?;
/// let made = CACHE.get_or_build(|| Ok(<f64 as ferrompi::Equivalence>::datatype()));
/// assert_eq!(made, CACHE.get_or_build(|| unreachable!()));
/// # Ok::<(), ferrompi::Error>(())
/// ```
#[derive(Debug)]
pub struct TypeCache(AtomicU64);

// A handle fits the word (a pointer or an int on every MPI): `get_or_build` reads it back.
const _: () = assert!(std::mem::size_of::<ffi::MPI_Datatype>() <= 8);

/// A handle's bytes as a word (the rest zero).
fn to_bits(datatype: Datatype) -> u64 {
    ffi::handle_bits(datatype.as_raw())
}

impl TypeCache {
    /// An empty cache, for a `static`.
    pub const fn new() -> TypeCache {
        TypeCache(AtomicU64::new(0))
    }

    /// The cached datatype, or the one `build` makes, cached if it succeeded. If `build`
    /// fails (MPI not running, or refused on this thread) the result is [`Datatype::NULL`],
    /// not cached: every operation given it on the same thread is refused for the same
    /// reason before MPI sees it.
    #[inline(always)]
    pub fn get_or_build(&self, build: impl FnOnce() -> Result<Datatype>) -> Datatype {
        let bits = self.0.load(Ordering::Acquire);
        if bits != 0 {
            // SAFETY: `bits` was stored by `build` below from a committed handle (`to_bits`),
            // whose first `size_of` bytes are the handle's; MPI keeps it until finalize.
            unsafe { Datatype::from_raw(std::mem::transmute_copy(&bits)) }
        } else {
            self.build(build)
        }
    }

    #[cold]
    #[inline(never)]
    fn build(&self, build: impl FnOnce() -> Result<Datatype>) -> Datatype {
        // No lock while building: a struct's build asks for its fields' datatypes, which may
        // build too. Two threads may both build; the loser's copy waits for finalize.
        let Ok(made) = build() else {
            return Datatype::NULL;
        };
        match self
            .0
            .compare_exchange(0, to_bits(made), Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => made,
            Err(theirs) => {
                // SAFETY: as in `get_or_build`: the bits another thread stored.
                unsafe { Datatype::from_raw(std::mem::transmute_copy(&theirs)) }
            }
        }
    }
}

impl Default for TypeCache {
    fn default() -> TypeCache {
        TypeCache::new()
    }
}

/// How many generic instantiations [`cached_by_type`] keeps without a lock.
pub const GENERIC_SLOTS: usize = 256;

static GENERIC: [OnceLock<(TypeId, Datatype)>; GENERIC_SLOTS] =
    [const { OnceLock::new() }; GENERIC_SLOTS];
/// Serialises insertions into [`GENERIC`] and holds the instantiations past its slots.
static OVERFLOW: Mutex<Vec<(TypeId, Datatype)>> = Mutex::new(Vec::new());

/// The `u64` a `TypeId` hashes as (std writes part of it with `write_u64`): its slot.
#[derive(Default)]
struct Slot(u64);

impl Hasher for Slot {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

#[inline(always)]
fn first_slot(id: TypeId) -> usize {
    let mut slot = Slot::default();
    id.hash(&mut slot);
    (slot.finish() % GENERIC_SLOTS as u64) as usize
}

/// The committed datatype of the type `T`, for a generic type that cannot have a `static` of
/// its own (see the module docs): found in a fixed table without a lock, or made by `build`
/// and kept. On failure, as [`TypeCache::get_or_build`].
#[inline]
pub fn cached_by_type<T: 'static>(build: impl FnOnce() -> Result<Datatype>) -> Datatype {
    let id = TypeId::of::<T>();
    let first = first_slot(id);
    for k in 0..GENERIC_SLOTS {
        match GENERIC[(first + k) % GENERIC_SLOTS].get() {
            Some(&(seen, made)) if seen == id => return made,
            Some(_) => {}
            None => break,
        }
    }
    build_by_type(id, first, build)
}

/// [`cached_by_type`] when the table does not have `id`: made outside any lock (a struct's
/// build asks for its fields'), then inserted under [`OVERFLOW`]'s lock unless another thread
/// was first.
#[cold]
#[inline(never)]
fn build_by_type(id: TypeId, first: usize, build: impl FnOnce() -> Result<Datatype>) -> Datatype {
    let find = |overflow: &[(TypeId, Datatype)]| {
        (0..GENERIC_SLOTS)
            .map_while(|k| GENERIC[(first + k) % GENERIC_SLOTS].get())
            .chain(overflow)
            .find(|(seen, _)| *seen == id)
            .map(|&(_, made)| made)
    };
    let lock = || OVERFLOW.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(made) = find(&lock()) {
        return made;
    }
    let Ok(made) = build() else {
        return Datatype::NULL;
    };
    let mut overflow = lock();
    if let Some(theirs) = find(&overflow) {
        return theirs; // ours waits for finalize, as in `TypeCache::build`
    }
    // Insertions happen only here, under the lock, into the first empty slot of the probe.
    match (0..GENERIC_SLOTS)
        .map(|k| &GENERIC[(first + k) % GENERIC_SLOTS])
        .find(|slot| slot.get().is_none())
    {
        Some(slot) => {
            let _ = slot.set((id, made));
        }
        None => overflow.push((id, made)),
    }
    made
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Builds made by `lookup`, over the whole test.
    static BUILDS: AtomicUsize = AtomicUsize::new(0);

    /// A predefined datatype standing for instantiation `k` (no MPI needed to name one).
    fn pick(k: usize) -> Datatype {
        [
            f64::datatype(),
            f32::datatype(),
            i32::datatype(),
            u8::datatype(),
        ][k % 4]
    }

    fn lookup<T: 'static>(k: usize) -> Datatype {
        cached_by_type::<T>(|| {
            BUILDS.fetch_add(1, Ordering::Relaxed);
            Ok(pick(k))
        })
    }

    /// `check(k, found)` for 400 distinct types, `[[u8; A]; B]` for A, B in 0..20: more than
    /// the table's slots, so the overflow list is used too.
    macro_rules! each_type {
        ($check:ident; $($a:literal)*) => {
            $( each_type!(@row $check; $a; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19); )*
        };
        (@row $check:ident; $a:literal; $($b:literal)*) => {
            $( $check($a * 20 + $b, lookup::<[[u8; $a]; $b]>($a * 20 + $b)); )*
        };
    }

    #[test]
    fn generic_instantiations_keep_their_own_datatype_past_the_table() {
        let mut wrong = Vec::new();
        let mut check = |k: usize, found: Datatype| {
            if found != pick(k) {
                wrong.push(k);
            }
        };
        for _ in 0..2 {
            each_type!(check; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19);
        }
        assert_eq!(
            wrong,
            Vec::<usize>::new(),
            "instantiations given another's datatype"
        );
        assert_eq!(
            BUILDS.load(Ordering::Relaxed),
            400,
            "each built once, found after"
        );
        const { assert!(GENERIC_SLOTS < 400) };
        assert_eq!(OVERFLOW.lock().unwrap().len(), 400 - GENERIC_SLOTS);
    }

    #[test]
    fn a_static_cache_builds_once_and_keeps_no_failure() {
        static CACHE: TypeCache = TypeCache::new();
        let failed = CACHE.get_or_build(|| {
            Err(ErrorKind::InvalidArgument {
                operation: "test",
                reason: "no MPI".into(),
            }
            .into())
        });
        assert_eq!(failed, Datatype::NULL);
        assert_eq!(CACHE.get_or_build(|| Ok(f64::datatype())), f64::datatype());
        assert_eq!(
            CACHE.get_or_build(|| unreachable!("built again")),
            f64::datatype()
        );
    }
}
