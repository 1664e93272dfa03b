//! Checked views of a buffer through a [`DerivedType`]: what the operations taking a layout
//! are given, made only when every byte the type reaches lies inside the slice.

use super::derived::DerivedType;
use super::{Equivalence, empty_recv, empty_send};
use crate::error::{ErrorKind, Result};
use crate::ffi;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;

/// `count` copies of a [`DerivedType`] laid over a slice to read from (a send, a pack):
/// made by [`DerivedType::view`], which checked that every byte the copies reach lies inside
/// the slice.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    ptr: *const c_void,
    count: c_int,
    datatype: ffi::MPI_Datatype,
    _borrow: PhantomData<(&'a [u8], &'a DerivedType<'a>)>,
}

/// `count` copies of a [`DerivedType`] laid over a slice to write to (a receive, a broadcast,
/// an unpack): made by [`DerivedType::view_mut`], which checked that every byte the copies
/// reach lies inside the slice. MPI writes only the bytes the type reaches; values of a type
/// with invalid bit patterns (`bool`) are repaired after every receive into it.
#[derive(Debug)]
pub struct ViewMut<'a, T> {
    buf: &'a mut [T],
    count: c_int,
    datatype: ffi::MPI_Datatype,
    _type: PhantomData<&'a DerivedType<'a>>,
}

impl<'mpi> DerivedType<'mpi> {
    /// `count` copies of this type over `buf`, to read from: checked, before any MPI call,
    /// that the bytes they reach (from `i * extent + true_lb` to `+ true_extent` for each copy
    /// `i`) are all inside `buf`, negative lower bounds and resized types included.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// let column = DerivedType::vector(&mpi, 3, 1, 4, f64::datatype())?;
    /// let matrix = [0.0f64; 12];
    /// assert!(column.view(&matrix, 1).is_ok()); // elements 0, 4, 8
    /// assert!(column.view(&matrix[4..], 1).is_err()); // would reach element 12
    /// assert!(column.view(&matrix, 2).is_err()); // a second copy starts at element 9
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] if a copy reaches outside `buf`; [`ErrorKind::CountOverflow`]
    /// if `count` is over `int`.
    pub fn view<'a, T: Equivalence>(&'a self, buf: &'a [T], count: usize) -> Result<View<'a>> {
        let count = self.count_over(std::mem::size_of_val(buf), count, "view")?;
        let ptr = if buf.is_empty() {
            empty_send()
        } else {
            buf.as_ptr().cast()
        };
        Ok(View {
            ptr,
            count,
            datatype: self.as_raw(),
            _borrow: PhantomData,
        })
    }

    /// `count` copies of this type over `buf`, to write to: checked as [`view`](Self::view).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// use ferrompi::{DerivedType, Equivalence};
    /// let tail = DerivedType::resized(&mpi, f64::datatype(), -8, 8)?; // lower bound -8
    /// let mut values = [0.0f64; 4];
    /// assert!(tail.view_mut(&mut values, 4).is_ok()); // the type map is still at 0
    /// let before = DerivedType::create_struct(&mpi, &[1], &[-8], &[f64::datatype().into()])?;
    /// assert!(before.view_mut(&mut values, 1).is_err()); // reaches 8 bytes before the slice
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`view`](Self::view).
    pub fn view_mut<'a, T: Equivalence>(
        &'a self,
        buf: &'a mut [T],
        count: usize,
    ) -> Result<ViewMut<'a, T>> {
        let count = self.count_over(std::mem::size_of_val(buf), count, "view_mut")?;
        Ok(ViewMut {
            buf,
            count,
            datatype: self.as_raw(),
            _type: PhantomData,
        })
    }
}

impl DerivedType<'_> {
    /// `count` as MPI's count, once checked that `count` copies of this type reach only bytes
    /// `0..bytes` of a buffer (what every view and [`owned_view`](DerivedType::owned_view)
    /// checks): an error naming the bytes they reach otherwise.
    pub(crate) fn count_over(
        &self,
        bytes: usize,
        count: usize,
        operation: &'static str,
    ) -> Result<c_int> {
        let bounds = self.bounds();
        let reach = bounds.reach(count);
        if reach.start < 0 || reach.end > bytes as i128 {
            return Err(ErrorKind::InvalidArgument {
                operation,
                reason: format!(
                    "{count} copies of a type reaching bytes {}..{} of its buffer (lower bound \
                     {}, extent {}, true extent {}) do not fit in a buffer of {bytes} bytes",
                    reach.start, reach.end, bounds.true_lb, bounds.extent, bounds.true_extent
                ),
            }
            .into());
        }
        c_int::try_from(count).map_err(|_| super::count_overflow(count, 1, operation))
    }
}

impl View<'_> {
    /// How many copies of its type the view holds.
    #[inline]
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// What MPI is given: the address, the count and the datatype.
    #[inline]
    pub(crate) fn raw(&self) -> (*const c_void, c_int, ffi::MPI_Datatype) {
        (self.ptr, self.count, self.datatype)
    }
}

impl<'a, T: Equivalence> ViewMut<'a, T> {
    /// How many copies of its type the view holds.
    #[inline]
    pub fn count(&self) -> usize {
        self.count as usize
    }

    /// What MPI is given: the address, the count and the datatype.
    #[inline]
    pub(crate) fn raw(&mut self) -> (*mut c_void, c_int, ffi::MPI_Datatype) {
        let ptr = if self.buf.is_empty() {
            empty_recv()
        } else {
            self.buf.as_mut_ptr().cast()
        };
        (ptr, self.count, self.datatype)
    }

    /// The view's datatype.
    #[inline]
    pub(crate) fn datatype(&self) -> ffi::MPI_Datatype {
        self.datatype
    }

    /// Makes every value of the slice valid again after MPI wrote into it.
    #[inline]
    pub(crate) fn repair(&mut self) {
        super::repair(self.buf);
    }

    /// Splits the view into its slice and what MPI is given, for an operation that outlives
    /// this borrow of the view (the slice stays borrowed for `'a`).
    #[inline]
    pub(crate) fn into_parts(self) -> (&'a mut [T], c_int, ffi::MPI_Datatype) {
        (self.buf, self.count, self.datatype)
    }
}
