//! Error classes against the installed MPI, and MPI_ERRORS_RETURN on every communicator.

use crate::checks::Checks;
use ferrompi::ErrorKind;
use ferrompi::{Communicator, ErrorClass, Mpi, check, ffi};

pub fn run(mpi: &Mpi, t: &mut Checks) {
    // Every named class is a class of this MPI: MPI_Error_class maps a class to itself.
    for &class in ErrorClass::ALL {
        let mut out = -1;
        // SAFETY: MPI_Error_class writes one int.
        let rc = unsafe { ffi::MPI_Error_class(class.raw(), &mut out) };
        t.eq(rc, ffi::MPI_SUCCESS, format!("MPI_Error_class({class:?})"));
        t.eq(
            ErrorClass::from_raw(out),
            class,
            format!("class of {class:?}"),
        );
    }

    // Real errors from raw calls come back (MPI_ERRORS_RETURN) with the right class, on the
    // predefined communicators and on created ones.
    let world = mpi.world();
    let dup = t.okay(world.dup(), "dup");
    let split = t
        .okay(world.split(Some(0), 0), "split")
        .expect("every rank has color 0");
    let self_comm = mpi.self_comm();
    for (name, comm) in [
        ("world", &world),
        ("self", &self_comm),
        ("dup", &dup),
        ("split", &split),
    ] {
        let e = raw_send(comm, comm.size(), 0).expect_err("send to rank == size must fail");
        t.eq(
            e.class(),
            Some(ErrorClass::Rank),
            format!("{name}: class of a bad rank"),
        );
        t.ok(
            matches!(e.kind(), ErrorKind::Mpi { message, .. } if !message.is_empty()),
            format!("{name}: message"),
        );
        let e = raw_send(comm, 0, -5).expect_err("negative tag must fail");
        t.eq(
            e.class(),
            Some(ErrorClass::Tag),
            format!("{name}: class of a bad tag"),
        );
    }

    // Errors MPI reports through our API carry the operation's name.
    let (me, next) = (world.rank(), (world.rank() + 1) % world.size());
    let prev = (world.rank() + world.size() - 1) % world.size();
    let big = [me; 10];
    let mut backing = [-7i32; 8];
    let result = world.sendrecv(&big, next, 3, &mut backing[..5], prev, 3);
    t.eq(
        &backing[5..],
        &[-7; 3][..],
        "nothing written past the receive buffer",
    );
    t.truncated(result.clone(), world.size() == 1, "truncation class");
    if let Err(e) = result {
        t.ok(
            matches!(
                e.kind(),
                ErrorKind::Mpi {
                    operation: "sendrecv",
                    ..
                }
            ),
            "operation name is sendrecv",
        );
        t.ok(
            e.to_string().starts_with("sendrecv: MPI error Truncate"),
            format!("display: {e}"),
        );
    }
}

fn raw_send(comm: &Communicator<'_>, dest: i32, tag: i32) -> ferrompi::Result<()> {
    let buf = [0u8; 1];
    // SAFETY: a valid one-byte buffer and communicator; the call fails argument checks.
    let rc = unsafe {
        ffi::MPI_Send(
            buf.as_ptr().cast(),
            1,
            ffi::MPI_BYTE,
            dest,
            tag,
            comm.as_raw(),
        )
    };
    check(rc, "raw send")
}
