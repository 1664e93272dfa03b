//! Info objects (MPI-4.0 §10): key/value hints handed to MPI when creating windows and
//! communicators, and what MPI reports back (`MPI_Win_get_info`).
//!
//! ```no_run
//! # use ferrompi::{Info, Mpi};
//! let mpi = Mpi::init()?;
//! let mut info = Info::new(&mpi)?;
//! info.set("alloc_shared_noncontig", "true")?;
//! assert_eq!(info.get("alloc_shared_noncontig")?.as_deref(), Some("true"));
//! # Ok::<(), ferrompi::Error>(())
//! ```

use crate::env::{self, Mpi, enter};
use crate::error::{ErrorKind, Result, check};
use crate::ffi;
use std::ffi::{CString, c_int};
use std::marker::PhantomData;

/// An owned `MPI_Info`: a set of string keys and values, freed on drop.
///
/// Borrows the [`Mpi`] environment, so it cannot outlive `MPI_Finalize`.
#[derive(Debug)]
pub struct Info<'env> {
    raw: ffi::MPI_Info,
    _env: PhantomData<&'env Mpi>,
}

// SAFETY: the handle is an identifier MPI resolves internally; every call passes the thread gate,
// and mutation needs `&mut self`, so two threads never change one info object at once.
unsafe impl Send for Info<'_> {}
// SAFETY: `&Info` only reads (`MPI_Info_get*`), through the thread gate.
unsafe impl Sync for Info<'_> {}

/// The raw handle of an optional info, `MPI_INFO_NULL` for none.
pub(crate) fn raw_or_null(info: Option<&Info<'_>>) -> ffi::MPI_Info {
    info.map_or(ffi::MPI_INFO_NULL, Info::as_raw)
}

impl<'env> Info<'env> {
    /// An empty info object (`MPI_Info_create`, MPI-4.0 §10).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut hints = ferrompi::Info::new(&mpi)?; // MPI_Info_create
    /// hints.set("alloc_shared_noncontig", "true")?;
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn new(mpi: &'env Mpi) -> Result<Info<'env>> {
        let _ = mpi;
        Info::create()
    }

    /// `MPI_Info_create` for the crate's own use, by a caller that holds a handle borrowing
    /// the environment (so MPI is running for as long as the info lives).
    pub(crate) fn create() -> Result<Info<'env>> {
        const OP: &str = "info_create";
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_INFO_NULL;
        // SAFETY: MPI writes a new handle, which we then own.
        check(unsafe { ffi::MPI_Info_create(&mut raw) }, OP)?;
        // SAFETY: MPI just created it for us.
        Ok(unsafe { Info::adopt(raw) })
    }

    /// An info object with the given entries.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let hints = ferrompi::Info::with(&mpi, &[("same_size", "true"), ("accumulate_ops", "same_op")])?;
    /// assert_eq!(hints.len()?, 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Info::new`] and [`Info::set`].
    pub fn with(mpi: &'env Mpi, entries: &[(&str, &str)]) -> Result<Info<'env>> {
        let mut info = Info::new(mpi)?;
        for (key, value) in entries {
            info.set(key, value)?;
        }
        Ok(info)
    }

    /// Takes ownership of an info object MPI created for us.
    ///
    /// # Safety
    /// `raw` must be a valid info handle the caller owns and hands over.
    pub(crate) unsafe fn adopt(raw: ffi::MPI_Info) -> Info<'env> {
        crate::live::made(crate::live::Kind::Info);
        Info {
            raw,
            _env: PhantomData,
        }
    }

    /// The raw handle, for calling `ffi` directly. It stays owned by `self`.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let hints = ferrompi::Info::new(&mpi)?;
    /// let _raw: ferrompi::ffi::MPI_Info = hints.as_raw();
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    pub fn as_raw(&self) -> ffi::MPI_Info {
        self.raw
    }

    /// Sets `key` to `value` (`MPI_Info_set`), replacing an earlier value.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut hints = ferrompi::Info::new(&mpi)?;
    /// hints.set("no_locks", "true")?; // MPI_Info_set
    /// assert_eq!(hints.get("no_locks")?.as_deref(), Some("true"));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for a key longer than `MPI_MAX_INFO_KEY - 1` bytes, a value
    /// longer than `MPI_MAX_INFO_VAL - 1` bytes, an empty key, or a NUL byte in either;
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        const OP: &str = "info_set";
        let key = c_key(key, OP)?;
        let value = c_string(value, ffi::MPI_MAX_INFO_VAL, "value", OP)?;
        let _gate = enter(OP)?;
        // SAFETY: a valid info handle we own and two NUL-terminated strings MPI copies.
        check(
            unsafe { ffi::MPI_Info_set(self.raw, key.as_ptr(), value.as_ptr()) },
            OP,
        )
    }

    /// The value of `key`, or `None` if it is not set (`MPI_Info_get_valuelen`,
    /// `MPI_Info_get`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let hints = ferrompi::Info::with(&mpi, &[("same_size", "true")])?;
    /// assert_eq!(hints.get("same_size")?.as_deref(), Some("true"));
    /// assert_eq!(hints.get("absent")?, None);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::InvalidArgument`] for an invalid key (see [`Info::set`]);
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn get(&self, key: &str) -> Result<Option<String>> {
        const OP: &str = "info_get";
        let key = c_key(key, OP)?;
        let _gate = enter(OP)?;
        let (mut len, mut flag): (c_int, c_int) = (0, 0);
        // SAFETY: a valid info handle and NUL-terminated key; writes two ints.
        let rc = unsafe { ffi::MPI_Info_get_valuelen(self.raw, key.as_ptr(), &mut len, &mut flag) };
        check(rc, OP)?;
        if flag == 0 {
            return Ok(None);
        }
        // Room for the value and its terminating NUL, as MPI_Info_get writes both.
        let capacity = len
            .checked_add(1)
            .ok_or_else(|| ErrorKind::InvalidArgument {
                operation: OP,
                reason: format!("MPI reported a value length of {len}"),
            })?;
        let value = env::mpi_string(capacity, OP, |buf, out_len| {
            let mut found: c_int = 0;
            // SAFETY: `buf` has `len + 1` bytes; MPI writes at most `len` characters and a NUL.
            let rc = unsafe { ffi::MPI_Info_get(self.raw, key.as_ptr(), len, buf, &mut found) };
            // SAFETY: `out_len` points at the length `mpi_string` reads back.
            unsafe { *out_len = len };
            rc
        })?;
        Ok(Some(value))
    }

    /// Removes `key` (`MPI_Info_delete`); `false` if it was not set.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let mut hints = ferrompi::Info::with(&mpi, &[("same_size", "true")])?;
    /// assert!(hints.delete("same_size")?); // it was there
    /// assert!(!hints.delete("same_size")?);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Info::get`].
    pub fn delete(&mut self, key: &str) -> Result<bool> {
        const OP: &str = "info_delete";
        if self.get(key)?.is_none() {
            return Ok(false);
        }
        let key = c_key(key, OP)?;
        let _gate = enter(OP)?;
        // SAFETY: a valid info handle we own and a NUL-terminated key that is set.
        check(unsafe { ffi::MPI_Info_delete(self.raw, key.as_ptr()) }, OP)?;
        Ok(true)
    }

    /// How many keys are set (`MPI_Info_get_nkeys`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let hints = ferrompi::Info::with(&mpi, &[("a", "1"), ("b", "2")])?;
    /// assert_eq!(hints.len()?, 2);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn len(&self) -> Result<usize> {
        const OP: &str = "info_get_nkeys";
        let _gate = enter(OP)?;
        let mut n: c_int = 0;
        // SAFETY: a valid info handle; writes one int.
        check(unsafe { ffi::MPI_Info_get_nkeys(self.raw, &mut n) }, OP)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether no key is set.
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// assert!(ferrompi::Info::new(&mpi)?.is_empty()?);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Info::len`].
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Every key and its value, in MPI's order (`MPI_Info_get_nthkey`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let hints = ferrompi::Info::with(&mpi, &[("a", "1")])?;
    /// assert_eq!(hints.entries()?, [("a".to_string(), "1".to_string())]);
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Info::get`].
    pub fn entries(&self) -> Result<Vec<(String, String)>> {
        const OP: &str = "info_get_nthkey";
        let n = self.len()?;
        let mut entries = Vec::with_capacity(n);
        for i in 0..n {
            let key = {
                let _gate = enter(OP)?;
                let index = c_int::try_from(i).unwrap_or(c_int::MAX);
                env::mpi_string(ffi::MPI_MAX_INFO_KEY, OP, |buf, len| {
                    // SAFETY: `buf` has MPI_MAX_INFO_KEY bytes, as the call requires.
                    let rc = unsafe { ffi::MPI_Info_get_nthkey(self.raw, index, buf) };
                    // SAFETY: `len` points at the length `mpi_string` reads back; the string
                    // is NUL-terminated within the buffer.
                    unsafe { *len = ffi::MPI_MAX_INFO_KEY };
                    rc
                })?
            };
            let value = self.get(&key)?.unwrap_or_default();
            entries.push((key, value));
        }
        Ok(entries)
    }

    /// A copy with the same entries (`MPI_Info_dup`).
    ///
    /// ```
    /// # let mpi = ferrompi::Mpi::init()?;
    /// # let world = mpi.world();
    /// let hints = ferrompi::Info::with(&mpi, &[("a", "1")])?;
    /// let copy = hints.dup()?; // MPI_Info_dup: independent from now on
    /// assert_eq!(copy.get("a")?.as_deref(), Some("1"));
    /// # Ok::<(), ferrompi::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::WrongThread`]; [`ErrorKind::Mpi`].
    pub fn dup(&self) -> Result<Info<'env>> {
        const OP: &str = "info_dup";
        let _gate = enter(OP)?;
        let mut raw = ffi::MPI_INFO_NULL;
        // SAFETY: a valid info handle; MPI writes a new handle, which we then own.
        check(unsafe { ffi::MPI_Info_dup(self.raw, &mut raw) }, OP)?;
        // SAFETY: MPI just created it for us.
        Ok(unsafe { Info::adopt(raw) })
    }
}

impl Drop for Info<'_> {
    fn drop(&mut self) {
        if let Ok(_gate) = enter("info_free") {
            // SAFETY: we own the handle and this is its only free.
            if unsafe { ffi::MPI_Info_free(&mut self.raw) } == ffi::MPI_SUCCESS {
                crate::live::freed(crate::live::Kind::Info);
            }
        }
    }
}

/// A key as MPI takes it: non-empty, shorter than `MPI_MAX_INFO_KEY`, without NUL.
fn c_key(key: &str, operation: &'static str) -> Result<CString> {
    if key.is_empty() {
        return Err(ErrorKind::InvalidArgument {
            operation,
            reason: "the key is empty".into(),
        }
        .into());
    }
    c_string(key, ffi::MPI_MAX_INFO_KEY, "key", operation)
}

/// `text` as a C string of fewer than `max` bytes (MPI's limits count the NUL).
fn c_string(text: &str, max: c_int, what: &str, operation: &'static str) -> Result<CString> {
    let limit = usize::try_from(max).unwrap_or(1).saturating_sub(1);
    if text.len() > limit {
        return Err(ErrorKind::InvalidArgument {
            operation,
            reason: format!(
                "the {what} is {} bytes, at most {limit} allowed",
                text.len()
            ),
        }
        .into());
    }
    CString::new(text).map_err(|_| {
        ErrorKind::InvalidArgument {
            operation,
            reason: format!("the {what} contains a NUL byte"),
        }
        .into()
    })
}
