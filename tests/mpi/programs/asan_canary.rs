//! The AddressSanitizer run's own proof that it would catch what it looks for (`tools/asan.sh`):
//! a receive through the raw `ffi` that tells MPI a buffer of 8 bytes holds 64, as no safe call
//! of the crate can. MPI copies the message in with `memcpy`, which ASan intercepts (also in
//! MPI's libraries, which are not instrumented): the job must end with ASan's report, before
//! any byte past the buffer is written. Run only in an ASan build ([`crate::asan_active`]).

use crate::checks::Checks;
use ferrompi::{Equivalence, Mpi, ffi};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    // The driver runs this program only in an ASan build; a rank started by hand elsewhere
    // stops here rather than overwrite its stack.
    assert!(
        crate::asan_active(),
        "asan_canary runs only under AddressSanitizer"
    );
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let (next, prev) = ((rank + 1) % size, (rank + size - 1) % size);
    let (comm, byte) = (world.as_raw(), u8::datatype().as_raw());
    // On the heap, apart from `short` (at one rank MPICH copies straight from it and first
    // checks that the two ranges do not overlap).
    let message = Box::new([7u8; 64]);
    let mut short = [0u8; 8];
    let (out, into) = (message.as_ptr().cast(), short.as_mut_ptr().cast());
    t.ok(true, "started");
    // SAFETY: none, deliberately: `short` holds 8 bytes and MPI is told 64. ASan stops the
    // process at the receive's copy, before it writes past `short`.
    unsafe {
        let mut send = std::mem::MaybeUninit::uninit();
        let mut status = std::mem::MaybeUninit::uninit();
        ffi::MPI_Isend(out, 64, byte, next, 0, comm, send.as_mut_ptr());
        ffi::MPI_Recv(into, 64, byte, prev, 0, comm, status.as_mut_ptr());
        ffi::MPI_Wait(send.as_mut_ptr(), status.as_mut_ptr());
    }
    t.ok(false, "ASan let MPI write 64 bytes into an 8-byte buffer");
}
