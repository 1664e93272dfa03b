//! A channel between partner ranks (0-1, 2-3, ...): raw bytes, plain structs, and nonblocking
//! owned buffers, on a private communicator that never collides with other traffic.
//!
//! ```sh
//! tools/run-example.sh channel 4
//! ```

use ferrompi::{Bytes, Mpi, Result};

#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Bound {
    stage: u32,
    scenario: u32,
    value: f64,
}

fn main() -> Result<()> {
    let mpi = Mpi::init()?;
    let world = mpi.world();
    let (rank, size) = (world.rank(), world.size());
    let partner = rank ^ 1;
    if partner >= size {
        println!("rank {rank}: no partner (run with an even number of ranks)");
        return Ok(());
    }
    let channel = world.channel(partner, 0)?;

    // Bytes: rank with the lower number speaks first.
    let mut reply = [0u8; 32];
    if rank < partner {
        channel.send(format!("hello from {rank}").as_bytes())?;
        let n = channel.recv(&mut reply)?;
        println!("rank {rank} got {:?}", String::from_utf8_lossy(&reply[..n]));
    } else {
        let n = channel.recv(&mut reply)?;
        println!("rank {rank} got {:?}", String::from_utf8_lossy(&reply[..n]));
        channel.send(format!("hello back from {rank}").as_bytes())?;
    }

    // Plain structs, any number of them, received without knowing the count.
    let bounds: Vec<Bytes<Bound>> = (0..3 + rank as u32)
        .map(|s| {
            Bytes(Bound {
                stage: s,
                scenario: rank as u32,
                value: f64::from(s) * 1.5,
            })
        })
        .collect();
    let sending = channel.isend(bounds)?;
    let received: Vec<Bytes<Bound>> = channel.recv_vec()?;
    let (_bounds, status) = sending.wait();
    status?;
    println!(
        "rank {rank} received {} bounds from {partner}; last: {:?}",
        received.len(),
        received.last().map(|b| b.0)
    );
    channel.close()
}
