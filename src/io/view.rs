//! File views (MPI-4.0 §14.3): which bytes of a file a process sees, as what, in which
//! representation (§14.5).
//!
//! A view is a displacement (bytes from the start of the file), an *etype* (the unit offsets
//! count) and a *filetype* (etypes and holes, tiled from the displacement on): a process whose
//! filetype is its block of a global array sees only that block, one contiguous stream of
//! etypes. Offsets of the explicit-offset calls and file pointers count etypes of the view.
//!
//! ```no_run
//! use ferrompi::io::{AccessMode, DataRep, File};
//! use ferrompi::{DerivedType, Equivalence, Order};
//! let mpi = ferrompi::Mpi::init()?;
//! let world = mpi.world();
//! let (rank, size) = (world.rank() as usize, world.size() as usize);
//! // A global 4 × (4·size) array of f64, each process owning four columns.
//! let block = DerivedType::subarray(&mpi, &[4, 4 * size], &[4, 4], &[0, 4 * rank], Order::C,
//!     f64::datatype())?;
//! let mut file = File::open(&world, "grid.bin", AccessMode::CREATE | AccessMode::WRONLY, None)?;
//! file.set_view::<f64>(0, &block, DataRep::Native, None)?;
//! file.write_at_all(0, &[rank as f64; 16])?; // lands in this process's columns
//! # Ok::<(), ferrompi::Error>(())
//! ```

use super::File;
use crate::datatype::{ContentType, Equivalence, TypeRef, decode};
use crate::env::{Mpi, enter};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use crate::info::{Info, raw_or_null};
use std::ffi::{CStr, c_int};

/// A data representation (MPI-4.0 §14.5): how values are laid out in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataRep {
    /// `"native"`: as in memory, no conversion; fastest, readable only by the same kind of
    /// machine.
    Native,
    /// `"internal"`: the MPI's own; readable by the same MPI on other machines.
    Internal,
    /// `"external32"`: big-endian IEEE (MPI-4.0 §14.5.2), portable between MPIs and machines.
    External32,
}

impl DataRep {
    /// The name MPI takes.
    #[must_use]
    pub fn name(self) -> &'static CStr {
        match self {
            DataRep::Native => c"native",
            DataRep::Internal => c"internal",
            DataRep::External32 => c"external32",
        }
    }

    fn from_name(name: &str) -> Option<DataRep> {
        [DataRep::Native, DataRep::Internal, DataRep::External32]
            .into_iter()
            .find(|rep| rep.name().to_bytes() == name.as_bytes())
    }
}

/// A file's view, as [`File::get_view`] reads it back from MPI.
#[derive(Debug)]
pub struct FileView<'mpi> {
    /// Where the view starts, in bytes from the start of the file.
    pub disp: u64,
    /// The etype: the unit offsets count.
    pub etype: ContentType<'mpi>,
    /// The filetype: the etypes this process sees, and the holes between them.
    pub filetype: ContentType<'mpi>,
    /// The data representation (`None` for one registered by the program).
    pub datarep: Option<DataRep>,
}

impl File<'_> {
    /// Sets the view (`MPI_File_set_view`, MPI-4.0 §14.3); collective. The etype is `E`'s
    /// element datatype (`MPI_DOUBLE` for `f64` and `[f64; 3]`), the filetype `filetype`
    /// (built from that etype: [`E::datatype()`](Equivalence::datatype) itself for a
    /// contiguous stream, or a [`DerivedType`](crate::DerivedType) such as a subarray or a
    /// darray), starting `disp` bytes into the file. Both file pointers go back to 0.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::io::{AccessMode, DataRep, File};
    /// use ferrompi::Equivalence;
    /// let path = std::env::temp_dir().join(format!("ferrompi-doc-view-{}", std::process::id()));
    /// let me = mpi.self_comm();
    /// let mut file = File::open(&me, &path,
    ///     AccessMode::CREATE | AccessMode::RDWR | AccessMode::DELETE_ON_CLOSE, None)?;
    /// file.set_view::<u32>(8, u32::datatype(), DataRep::External32, None)?; // big-endian
    /// file.write_at(0, &[1u32, 2])?; // offsets count u32s, from byte 8
    /// assert_eq!(file.get_size()?, 16);
    /// let view = file.get_view(&mpi)?;
    /// assert_eq!((view.disp, view.datarep), (8, Some(DataRep::External32)));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// Reads and writes of a `T` whose element type is not the etype are refused unless the
    /// etype is bytes (the default view) or divides `T`'s size: counts through the view would
    /// not be whole etypes.
    ///
    /// # Errors
    /// [`ErrorKind::File`] (MPI's checks of the filetype: `MPI_ERR_TYPE`, a datarep it does
    /// not support: `MPI_ERR_UNSUPPORTED_DATAREP`); [`ErrorKind::InvalidArgument`] for a
    /// displacement over `i64::MAX`; [`ErrorKind::WrongThread`].
    pub fn set_view<'t, E: Equivalence>(
        &mut self,
        disp: u64,
        filetype: impl Into<TypeRef<'t>>,
        datarep: DataRep,
        info: Option<&Info<'_>>,
    ) -> Result<()> {
        const OP: &str = "file_set_view";
        let disp = super::offset(disp, OP)?;
        let etype = E::datatype().as_raw();
        let filetype = filetype.into().raw();
        let mut size: c_int = 0;
        let rc = {
            let _gate = enter(OP)?;
            // SAFETY: a predefined or committed datatype; MPI writes one int.
            check(unsafe { ffi::MPI_Type_size(etype, &mut size) }, OP)?;
            // SAFETY: a valid file, committed datatypes, a NUL-terminated representation name
            // and an info handle (or MPI_INFO_NULL).
            unsafe {
                ffi::MPI_File_set_view(
                    self.raw,
                    disp,
                    etype,
                    filetype,
                    datarep.name().as_ptr(),
                    raw_or_null(info),
                )
            }
        };
        self.check(rc, OP)?;
        self.etype = etype;
        self.etype_size = usize::try_from(size).unwrap_or(1).max(1);
        Ok(())
    }

    /// The view (`MPI_File_get_view`, MPI-4.0 §14.3): displacement, etype, filetype and
    /// representation as MPI holds them. A derived etype or filetype comes back as a new
    /// [`DerivedType`](crate::DerivedType), freed on drop.
    ///
    /// # Errors
    /// [`ErrorKind::File`]; [`ErrorKind::WrongThread`].
    pub fn get_view<'mpi>(&self, mpi: &'mpi Mpi) -> Result<FileView<'mpi>> {
        const OP: &str = "file_get_view";
        let mut disp: ffi::MPI_Offset = 0;
        let (mut etype, mut filetype) = (ffi::MPI_DATATYPE_NULL, ffi::MPI_DATATYPE_NULL);
        let mut name = vec![0u8; usize::try_from(ffi::MPI_MAX_DATAREP_STRING).unwrap_or(128) + 1];
        {
            let _gate = enter(OP)?;
            // SAFETY: a valid file; MPI writes an offset, two datatype handles and at most
            // MPI_MAX_DATAREP_STRING characters and a NUL into `name`.
            let rc = unsafe {
                ffi::MPI_File_get_view(
                    self.raw,
                    &mut disp,
                    &mut etype,
                    &mut filetype,
                    name.as_mut_ptr().cast(),
                )
            };
            self.check(rc, OP)?;
        }
        // Both handles are owned before any error can return, so neither leaks.
        let etype = decode::returned(mpi, etype, OP);
        let filetype = decode::returned(mpi, filetype, OP);
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        let name = String::from_utf8_lossy(&name[..end]);
        Ok(FileView {
            disp: u64::try_from(disp).unwrap_or(0),
            etype: etype?,
            filetype: filetype?,
            datarep: DataRep::from_name(&name),
        })
    }

    /// Checks that values of `T` are whole etypes of the view: the etype is `T`'s element
    /// type, or bytes (the default view, and any view of `MPI_BYTE`).
    #[inline(always)]
    pub(crate) fn check_etype<T: Equivalence>(&self, operation: &'static str) -> Result<()> {
        if self.etype_size == 1 || self.etype == T::datatype().as_raw() {
            Ok(())
        } else {
            self.check_etype_slow::<T>(operation)
        }
    }

    #[cold]
    #[inline(never)]
    fn check_etype_slow<T: Equivalence>(&self, operation: &'static str) -> Result<()> {
        let bytes = super::access::value_bytes::<T>(operation)?;
        if bytes != 0 && bytes % self.etype_size == 0 {
            return Ok(());
        }
        Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!(
                "a value of {} ({bytes} bytes) is not a whole number of the view's etype ({} bytes)",
                std::any::type_name::<T>(),
                self.etype_size
            ),
        }
        .into())
    }
}
