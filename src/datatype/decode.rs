//! Decoding a datatype (MPI-4.0 §5.1.13): how it was made (`MPI_Type_get_envelope`) and from
//! what (`MPI_Type_get_contents`).

use super::Datatype;
use super::derived::{DerivedType, TypeRef};
use crate::env::{Mpi, enter};
#[cfg(doc)]
use crate::error::ErrorKind;
use crate::error::{Result, check};
use crate::ffi;
use std::ffi::c_int;

// MPICH names its combiners in an enum (`MPIR_Combiner_enum`), the others as plain constants.
#[cfg(not(ferrompi_family = "mpich"))]
use crate::ffi::{
    MPI_COMBINER_CONTIGUOUS as CONTIGUOUS, MPI_COMBINER_DARRAY as DARRAY, MPI_COMBINER_DUP as DUP,
    MPI_COMBINER_F90_COMPLEX as F90_COMPLEX, MPI_COMBINER_F90_INTEGER as F90_INTEGER,
    MPI_COMBINER_F90_REAL as F90_REAL, MPI_COMBINER_HINDEXED as HINDEXED,
    MPI_COMBINER_HINDEXED_BLOCK as HINDEXED_BLOCK, MPI_COMBINER_HVECTOR as HVECTOR,
    MPI_COMBINER_INDEXED as INDEXED, MPI_COMBINER_INDEXED_BLOCK as INDEXED_BLOCK,
    MPI_COMBINER_NAMED as NAMED, MPI_COMBINER_RESIZED as RESIZED, MPI_COMBINER_STRUCT as STRUCT,
    MPI_COMBINER_SUBARRAY as SUBARRAY, MPI_COMBINER_VECTOR as VECTOR,
};
#[cfg(ferrompi_family = "mpich")]
use crate::ffi::{
    MPIR_Combiner_enum_MPI_COMBINER_CONTIGUOUS as CONTIGUOUS,
    MPIR_Combiner_enum_MPI_COMBINER_DARRAY as DARRAY, MPIR_Combiner_enum_MPI_COMBINER_DUP as DUP,
    MPIR_Combiner_enum_MPI_COMBINER_F90_COMPLEX as F90_COMPLEX,
    MPIR_Combiner_enum_MPI_COMBINER_F90_INTEGER as F90_INTEGER,
    MPIR_Combiner_enum_MPI_COMBINER_F90_REAL as F90_REAL,
    MPIR_Combiner_enum_MPI_COMBINER_HINDEXED as HINDEXED,
    MPIR_Combiner_enum_MPI_COMBINER_HINDEXED_BLOCK as HINDEXED_BLOCK,
    MPIR_Combiner_enum_MPI_COMBINER_HVECTOR as HVECTOR,
    MPIR_Combiner_enum_MPI_COMBINER_INDEXED as INDEXED,
    MPIR_Combiner_enum_MPI_COMBINER_INDEXED_BLOCK as INDEXED_BLOCK,
    MPIR_Combiner_enum_MPI_COMBINER_NAMED as NAMED,
    MPIR_Combiner_enum_MPI_COMBINER_RESIZED as RESIZED,
    MPIR_Combiner_enum_MPI_COMBINER_STRUCT as STRUCT,
    MPIR_Combiner_enum_MPI_COMBINER_SUBARRAY as SUBARRAY,
    MPIR_Combiner_enum_MPI_COMBINER_VECTOR as VECTOR,
};

/// The constructor that made a datatype (MPI-4.0 §5.1.13, Table 5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combiner {
    /// A predefined datatype (`MPI_COMBINER_NAMED`): nothing to decode.
    Named,
    /// `MPI_Type_dup`.
    Dup,
    /// `MPI_Type_contiguous`.
    Contiguous,
    /// `MPI_Type_vector`.
    Vector,
    /// `MPI_Type_create_hvector`.
    Hvector,
    /// `MPI_Type_indexed`.
    Indexed,
    /// `MPI_Type_create_hindexed`.
    Hindexed,
    /// `MPI_Type_create_indexed_block`.
    IndexedBlock,
    /// `MPI_Type_create_hindexed_block`.
    HindexedBlock,
    /// `MPI_Type_create_struct`.
    Struct,
    /// `MPI_Type_create_subarray`.
    Subarray,
    /// `MPI_Type_create_darray`.
    Darray,
    /// `MPI_Type_create_resized`.
    Resized,
    /// `MPI_Type_create_f90_real`.
    F90Real,
    /// `MPI_Type_create_f90_complex`.
    F90Complex,
    /// `MPI_Type_create_f90_integer`.
    F90Integer,
    /// A combiner of the MPI's own (deprecated Fortran-integer forms, MPI-4.1 additions).
    Other(i32),
}

impl Combiner {
    fn from_raw(code: c_int) -> Combiner {
        let known = [
            (NAMED as c_int, Combiner::Named),
            (DUP as c_int, Combiner::Dup),
            (CONTIGUOUS as c_int, Combiner::Contiguous),
            (VECTOR as c_int, Combiner::Vector),
            (HVECTOR as c_int, Combiner::Hvector),
            (INDEXED as c_int, Combiner::Indexed),
            (HINDEXED as c_int, Combiner::Hindexed),
            (INDEXED_BLOCK as c_int, Combiner::IndexedBlock),
            (HINDEXED_BLOCK as c_int, Combiner::HindexedBlock),
            (STRUCT as c_int, Combiner::Struct),
            (SUBARRAY as c_int, Combiner::Subarray),
            (DARRAY as c_int, Combiner::Darray),
            (RESIZED as c_int, Combiner::Resized),
            (F90_REAL as c_int, Combiner::F90Real),
            (F90_COMPLEX as c_int, Combiner::F90Complex),
            (F90_INTEGER as c_int, Combiner::F90Integer),
        ];
        known
            .iter()
            .find(|(raw, _)| *raw == code)
            .map_or(Combiner::Other(code), |&(_, combiner)| combiner)
    }
}

/// How a datatype was made, and how many arguments of each kind
/// [`contents`](DerivedType::contents) returns (`MPI_Type_get_envelope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Envelope {
    /// The constructor.
    pub combiner: Combiner,
    /// How many integer arguments (counts, block lengths, displacements in elements).
    pub integers: usize,
    /// How many address arguments (byte displacements, strides, bounds).
    pub addresses: usize,
    /// How many datatype arguments.
    pub datatypes: usize,
}

/// A datatype among a decoded type's arguments: predefined, or derived (a new handle MPI made,
/// owned and freed on drop, MPI-4.0 §5.1.13).
#[derive(Debug)]
pub enum ContentType<'mpi> {
    /// A predefined datatype.
    Named(Datatype),
    /// A derived datatype, itself decodable.
    Derived(DerivedType<'mpi>),
}

/// The arguments a datatype was made with (`MPI_Type_get_contents`), in the order its
/// constructor takes them (MPI-4.0 Table 5.1): for a vector, `integers` are `[count,
/// blocklength, stride]` and `datatypes` `[old]`.
#[derive(Debug)]
pub struct Contents<'mpi> {
    /// The integer arguments.
    pub integers: Vec<i32>,
    /// The address arguments.
    pub addresses: Vec<isize>,
    /// The datatype arguments.
    pub datatypes: Vec<ContentType<'mpi>>,
}

impl TypeRef<'_> {
    /// How this datatype was made (`MPI_Type_get_envelope`, MPI-4.0 §5.1.13).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::datatype::{Combiner, TypeRef};
    /// use ferrompi::{DerivedType, Equivalence};
    /// assert_eq!(TypeRef::from(f64::datatype()).envelope()?.combiner, Combiner::Named);
    /// let column = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?;
    /// let envelope = column.envelope()?;
    /// assert_eq!((envelope.combiner, envelope.integers, envelope.datatypes), (Combiner::Vector, 3, 1));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn envelope(&self) -> Result<Envelope> {
        const OP: &str = "type_get_envelope";
        let (mut ni, mut na, mut nd, mut combiner) = (0, 0, 0, 0);
        let _gate = enter(OP)?;
        // SAFETY: a valid datatype; MPI writes four ints.
        let rc = unsafe {
            ffi::MPI_Type_get_envelope(self.raw(), &mut ni, &mut na, &mut nd, &mut combiner)
        };
        check(rc, OP)?;
        let len = |n: c_int| usize::try_from(n).unwrap_or(0);
        Ok(Envelope {
            combiner: Combiner::from_raw(combiner),
            integers: len(ni),
            addresses: len(na),
            datatypes: len(nd),
        })
    }

    /// The arguments this datatype was made with (`MPI_Type_get_contents`, MPI-4.0
    /// §5.1.13); a predefined datatype has none.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::datatype::{ContentType, TypeRef};
    /// use ferrompi::{DerivedType, Equivalence};
    /// let column = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?;
    /// let contents = TypeRef::from(&column).contents(&mpi)?;
    /// assert_eq!(contents.integers, [3, 1, 4]);
    /// assert!(matches!(contents.datatypes[..], [ContentType::Named(d)] if d == f64::datatype()));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn contents<'mpi>(&self, mpi: &'mpi Mpi) -> Result<Contents<'mpi>> {
        const OP: &str = "type_get_contents";
        let envelope = self.envelope()?;
        let mut contents = Contents {
            integers: Vec::new(),
            addresses: Vec::new(),
            datatypes: Vec::new(),
        };
        if envelope.combiner == Combiner::Named {
            return Ok(contents); // MPI refuses to decode a predefined type
        }
        let mut integers = vec![0 as c_int; envelope.integers];
        let mut addresses = vec![0 as ffi::MPI_Aint; envelope.addresses];
        let mut datatypes = vec![ffi::MPI_DATATYPE_NULL; envelope.datatypes];
        let count = |n: usize| c_int::try_from(n).unwrap_or(c_int::MAX);
        {
            let _gate = enter(OP)?;
            // SAFETY: arrays of the lengths the envelope gave, which MPI fills.
            let rc = unsafe {
                ffi::MPI_Type_get_contents(
                    self.raw(),
                    count(integers.len()),
                    count(addresses.len()),
                    count(datatypes.len()),
                    integers.as_mut_ptr(),
                    addresses.as_mut_ptr(),
                    datatypes.as_mut_ptr(),
                )
            };
            check(rc, OP)?;
        }
        // Every handle is adopted before any error can return, so none leaks.
        let mut failed = None;
        for raw in datatypes {
            match returned(mpi, raw, OP) {
                Ok(datatype) => contents.datatypes.push(datatype),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        contents.integers = integers;
        #[allow(clippy::unnecessary_cast)] // MPI_Aint is isize in Open MPI, i64 in MPICH
        let addresses = addresses.into_iter().map(|a| a as isize).collect();
        contents.addresses = addresses;
        Ok(contents)
    }
}

/// A datatype handle MPI returned to the caller (`MPI_Type_get_contents`,
/// `MPI_File_get_view`): a predefined one as it is, a derived one adopted (and so freed on
/// drop: it is a new handle MPI made for the caller, MPI-4.0 §5.1.13). On error a derived
/// handle is still adopted and freed, never leaked.
pub(crate) fn returned<'mpi>(
    mpi: &'mpi Mpi,
    raw: ffi::MPI_Datatype,
    operation: &'static str,
) -> Result<ContentType<'mpi>> {
    // SAFETY: a handle MPI just returned, valid until it is adopted or, if predefined, for as
    // long as MPI is.
    match unsafe { TypeRef::from_raw(raw) }.envelope() {
        Ok(e) if e.combiner == Combiner::Named => {
            // SAFETY: a predefined datatype, valid while MPI is.
            Ok(ContentType::Named(unsafe { Datatype::from_raw(raw) }))
        }
        other => {
            let derived = DerivedType::adopt(mpi, raw, operation)?;
            other.map(|_| ContentType::Derived(derived))
        }
    }
}

impl<'mpi> DerivedType<'mpi> {
    /// How this type was made; see [`TypeRef::envelope`].
    ///
    /// # Errors
    /// As [`TypeRef::envelope`].
    pub fn envelope(&self) -> Result<Envelope> {
        TypeRef::from(self).envelope()
    }

    /// The arguments this type was made with; see [`TypeRef::contents`].
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::datatype::{Combiner, ContentType};
    /// use ferrompi::{DerivedType, Equivalence, Order};
    /// let tile = DerivedType::subarray(&mpi, &[3, 4], &[2, 2], &[1, 1], Order::C, f32::datatype())?;
    /// let spaced = DerivedType::resized(&mpi, &tile, 0, 8)?;
    /// let contents = spaced.contents()?;
    /// assert_eq!(contents.addresses, [0, 8]); // lb, extent
    /// let ContentType::Derived(inner) = &contents.datatypes[0] else { panic!("derived") };
    /// assert_eq!(inner.envelope()?.combiner, Combiner::Subarray);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`TypeRef::contents`].
    pub fn contents(&self) -> Result<Contents<'mpi>> {
        TypeRef::from(self).contents(self.mpi())
    }
}
