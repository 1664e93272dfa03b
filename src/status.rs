//! [`Status`]: what a completed receive, probe or request learned about its message
//! (`MPI_Status`, MPI-4.0 §3.2.5). Below the communicator and request layers, which both
//! return it.

use crate::datatype::Equivalence;
use crate::env::{enter, gated};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::c_int;

/// What a receive learned about its message (`MPI_Status`, MPI-4.0 §3.2.5).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Status {
    raw: ffi::MPI_Status,
}

impl std::fmt::Debug for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Status")
            .field("source", &self.source())
            .field("tag", &self.tag())
            .finish()
    }
}

impl Status {
    /// The *empty* status (MPI-4.0 §3.7.3): source `MPI_ANY_SOURCE`, tag `MPI_ANY_TAG`, count 0,
    /// not cancelled. It is what a completed collective, or a persistent request completed
    /// before, reports: no message, so it cannot be mistaken for one from rank 0 with tag 0.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let status = ferrompi::Status::empty(); // what a collective's request reports
    /// assert!(status.is_empty());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn empty() -> Status {
        Status {
            raw: ffi::MPI_Status {
                MPI_SOURCE: ffi::MPI_ANY_SOURCE,
                MPI_TAG: ffi::MPI_ANY_TAG,
                ..Default::default()
            },
        }
    }

    /// Whether this is the [empty](Status::empty) status: no message was received.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// ferrompi::scope(|s| {
    ///     let status = world.ibarrier(s)?.wait()?;
    ///     assert!(status.is_empty()); // no message behind a collective
    ///     Ok::<_, ferrompi::Error>(())
    /// })?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.raw.MPI_SOURCE == ffi::MPI_ANY_SOURCE && self.raw.MPI_TAG == ffi::MPI_ANY_TAG
    }

    pub(crate) fn as_raw_mut(&mut self) -> &mut ffi::MPI_Status {
        &mut self.raw
    }

    /// The rank of the sender (`MPI_SOURCE`); `MPI_PROC_NULL`'s value for a receive from
    /// [`Source::ProcNull`](crate::Source::ProcNull).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![1u8], me, 3)?;
    /// let status = world.recv(&mut [0u8], ferrompi::ANY_SOURCE, 3)?;
    /// assert_eq!(status.source(), me);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn source(&self) -> i32 {
        self.raw.MPI_SOURCE
    }

    /// Whether this is the empty status of a receive from [`Source::ProcNull`](crate::Source::ProcNull) (MPI-4.0 §3.11:
    /// source `MPI_PROC_NULL`, tag `MPI_ANY_TAG`, count 0).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// use ferrompi::PROC_NULL;
    /// let status = world.recv(&mut [0u8; 0], PROC_NULL, 0)?; // completes at once, empty
    /// assert!(status.is_proc_null());
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn is_proc_null(&self) -> bool {
        self.raw.MPI_SOURCE == ffi::MPI_PROC_NULL
    }

    /// The tag of the message (`MPI_TAG`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![1u8], me, 12)?;
    /// let status = world.recv(&mut [0u8], me, ferrompi::ANY_TAG)?;
    /// assert_eq!(status.tag(), 12);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn tag(&self) -> i32 {
        self.raw.MPI_TAG
    }

    /// The number of values of `T` received (`MPI_Get_count`, MPI-4.0 §3.2.5).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![1.0f64; 3], me, 0)?;
    /// let mut room = [0.0f64; 8];
    /// let status = world.recv(&mut room, me, 0)?;
    /// assert_eq!(status.count::<f64>()?, 3); // of the 8 it had room for
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if the message is not a whole number of values of `T`;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::AlreadyFinalized`] after MPI was finalized (MPI is
    /// needed to read the count); [`ErrorKind::InCallback`] inside a user-defined reduction;
    /// [`ErrorKind::Mpi`].
    #[inline(always)]
    pub fn count<T: Equivalence>(&self) -> Result<usize> {
        const OP: &str = "status_count";
        let mut count: c_int = 0;
        // SAFETY: a status filled by MPI and a predefined datatype; writes one int.
        let rc = gated(
            OP,
            #[inline(always)]
            || unsafe { ffi::MPI_Get_count(&self.raw, T::datatype().as_raw(), &mut count) },
        )?;
        check(rc, OP)?;
        // The usual case inline: a count MPI could give, of whole values.
        match usize::try_from(count) {
            Ok(n) if T::ELEMENTS != 0 && n % T::ELEMENTS == 0 => Ok(n / T::ELEMENTS),
            _ => self.count_slow::<T>(count),
        }
    }

    /// [`count`](Self::count) when `MPI_Get_count` gave no whole number of values: more
    /// elements than an `int` holds (`MPI_UNDEFINED`), a partial value, or a type of no elements.
    #[cold]
    fn count_slow<T: Equivalence>(&self, count: c_int) -> Result<usize> {
        const OP: &str = "status_count";
        let elements = if count == ffi::MPI_UNDEFINED {
            // Either a partial element, or more elements than an int holds: ask for the
            // element count in MPI_Count (MPI-4.0 §5.1.11), exact for single-type datatypes.
            let mut big: ffi::MPI_Count = 0;
            let _gate = enter(OP)?;
            // SAFETY: a status filled by MPI and a predefined datatype; writes one MPI_Count.
            let rc =
                unsafe { ffi::MPI_Get_elements_x(&self.raw, T::datatype().as_raw(), &mut big) };
            check(rc, OP)?;
            usize::try_from(big).ok()
        } else {
            usize::try_from(count).ok()
        };
        match elements.filter(|n| T::ELEMENTS != 0 && n % T::ELEMENTS == 0) {
            Some(n) => Ok(n / T::ELEMENTS),
            None if T::ELEMENTS == 0 => Ok(0),
            None => Err(ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!(
                    "the message is not a whole number of values of {}",
                    std::any::type_name::<T>()
                ),
            }
            .into()),
        }
    }

    /// The number of basic elements received, counted in `T`'s datatype
    /// (`MPI_Get_elements_x`, MPI-4.0 §5.1.11): for a derived struct, its fields' elements
    /// (`[f64; 3]` and a `u32` are 4 per value), including those of a value that arrived in
    /// part, which [`count`](Self::count) refuses.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let me = world.rank();
    /// let sending = world.isend_owned(vec![[1.0f64; 3]; 2], me, 0)?;
    /// let mut room = [[0.0f64; 3]; 4];
    /// let status = world.recv(&mut room, me, 0)?;
    /// assert_eq!(status.elements::<[f64; 3]>()?, 6);
    /// sending.wait().1?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`count`](Self::count), but never for a partial value.
    pub fn elements<T: Equivalence>(&self) -> Result<usize> {
        self.elements_raw(T::datatype().as_raw())
    }

    /// [`elements`](Self::elements) counted in a [`DerivedType`](crate::DerivedType): how many
    /// basic elements of what it selects arrived.
    ///
    /// # Errors
    /// As [`elements`](Self::elements).
    pub fn elements_of(&self, datatype: &crate::DerivedType<'_>) -> Result<usize> {
        self.elements_raw(datatype.as_raw())
    }

    fn elements_raw(&self, datatype: ffi::MPI_Datatype) -> Result<usize> {
        const OP: &str = "status_elements";
        let mut elements: ffi::MPI_Count = 0;
        let _gate = enter(OP)?;
        // SAFETY: a status filled by MPI and a committed datatype; writes one MPI_Count.
        let rc = unsafe { ffi::MPI_Get_elements_x(&self.raw, datatype, &mut elements) };
        check(rc, OP)?;
        usize::try_from(elements).map_err(|_| {
            ErrorKind::InvalidArgument {
                operation: OP,
                reason: "MPI reported no element count for this status".into(),
            }
            .into()
        })
    }

    /// Whether the operation was cancelled (`MPI_Test_cancelled`, MPI-4.0 §3.8.4).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut receiving = world.irecv_owned(vec![0u8], world.rank(), 97)?;
    /// receiving.cancel()?;
    /// assert!(receiving.wait().1?.cancelled()?);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn cancelled(&self) -> Result<bool> {
        let mut flag = 0;
        let _gate = enter("status_cancelled")?;
        // SAFETY: a status filled by MPI; writes one int.
        let rc = unsafe { ffi::MPI_Test_cancelled(&self.raw, &mut flag) };
        check(rc, "status_cancelled")?;
        Ok(flag != 0)
    }

    /// The raw status.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let status = ferrompi::Status::empty();
    /// let raw: &ferrompi::ffi::MPI_Status = status.as_raw();
    /// let _ = raw;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    #[inline]
    pub fn as_raw(&self) -> &ffi::MPI_Status {
        &self.raw
    }
}
