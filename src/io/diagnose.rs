//! What the file system says when an MPI reports a failure on a file with a class that names
//! no cause (`MPI_ERR_OTHER`, `MPI_ERR_IO`, a class of its own): MPICH 5.0 reports a missing
//! directory as `MPI_ERR_OTHER` once more than one process opens the file, Open MPI 5.0 a
//! full disk as `MPI_ERR_OTHER`, Open MPI 4.1 a full disk as success with nothing written.
//! Asked only on the error path, so that the same failure has the same class on every MPI.

use super::AccessMode;
use crate::error::{Error, ErrorClass, ErrorKind};
use std::path::Path;

/// Whether `class` names no cause.
fn generic(class: ErrorClass) -> bool {
    matches!(
        class,
        ErrorClass::Other | ErrorClass::Io | ErrorClass::Intern | ErrorClass::Unlisted(_)
    )
}

/// The class of an operating-system error, where one fits.
fn class_of(errno: i32) -> Option<ErrorClass> {
    Some(match errno {
        libc::ENOENT | libc::ENOTDIR => ErrorClass::NoSuchFile,
        libc::EACCES | libc::EPERM => ErrorClass::Access,
        libc::EROFS => ErrorClass::ReadOnly,
        libc::ENOSPC => ErrorClass::NoSpace,
        libc::EDQUOT => ErrorClass::Quota,
        libc::EEXIST => ErrorClass::FileExists,
        libc::EISDIR | libc::ENAMETOOLONG => ErrorClass::BadFile,
        _ => return None,
    })
}

/// `e` with the class and reason the file system gives, when MPI's class names no cause.
#[cold]
#[inline(never)]
fn refined(e: Error, cause: impl FnOnce() -> Option<(ErrorClass, String)>) -> Error {
    match e.kind() {
        ErrorKind::File { class, .. } if generic(*class) => {}
        _ => return e,
    }
    let Some((found, reason)) = cause() else {
        return e;
    };
    match e.into_kind() {
        ErrorKind::File {
            operation,
            path,
            class,
            code,
            message,
        } => ErrorKind::File {
            operation,
            path,
            class: found,
            code,
            message: format!("{reason} (the MPI reported {class:?}: {message})"),
        }
        .into(),
        other => other.into(),
    }
}

/// Refines a failed open of `path` with `amode`.
pub(crate) fn open_failed(e: Error, path: &Path, amode: AccessMode) -> Error {
    refined(e, || {
        let exists = path.symlink_metadata().is_ok();
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            return Some((
                ErrorClass::NoSuchFile,
                format!("the directory {} does not exist", dir.display()),
            ));
        }
        if !exists && !amode.contains(AccessMode::CREATE) {
            return Some((ErrorClass::NoSuchFile, "no such file".into()));
        }
        if exists && amode.contains(AccessMode::CREATE | AccessMode::EXCL) {
            return Some((ErrorClass::FileExists, "the file exists (EXCL)".into()));
        }
        let writes = amode.intersects(AccessMode::WRONLY | AccessMode::RDWR);
        let errno = if exists {
            std::fs::OpenOptions::new()
                .read(!amode.contains(AccessMode::WRONLY))
                .write(writes)
                .open(path)
                .err()?
                .raw_os_error()?
        } else {
            // Would creating it fail? Asked of the directory, without creating anything.
            let dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
            // SAFETY: a NUL-terminated path; access() only reads it.
            if unsafe { libc::access(dir.as_ptr(), libc::W_OK | libc::X_OK) } == 0 {
                return None;
            }
            std::io::Error::last_os_error().raw_os_error()?
        };
        let class = class_of(errno)?;
        Some((class, std::io::Error::from_raw_os_error(errno).to_string()))
    })
}

/// Refines a failed (or short) write to `path`: a full file system is
/// [`ErrorClass::NoSpace`].
pub(crate) fn write_failed(e: Error, path: &Path) -> Error {
    refined(e, || {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
        let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: a NUL-terminated path and room for one statvfs.
        if unsafe { libc::statvfs(dir.as_ptr(), stat.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: statvfs succeeded and filled it in.
        let stat = unsafe { stat.assume_init() };
        (stat.f_bavail == 0).then(|| {
            (
                ErrorClass::NoSpace,
                "the file system holding the file is full".into(),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_map_to_file_classes() {
        assert_eq!(class_of(libc::ENOENT), Some(ErrorClass::NoSuchFile));
        assert_eq!(class_of(libc::EROFS), Some(ErrorClass::ReadOnly));
        assert_eq!(class_of(libc::ENOSPC), Some(ErrorClass::NoSpace));
        assert_eq!(class_of(libc::EINTR), None);
        assert!(generic(ErrorClass::Other) && !generic(ErrorClass::NoSuchFile));
    }
}
