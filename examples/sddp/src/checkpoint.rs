//! Checkpoints: the solver's state in one file, written and read collectively through MPI-IO,
//! so that a run can stop and go on later on any number of ranks with the same cuts and
//! bounds, bit for bit.
//!
//! The file is 8-byte words, in the machine's byte order:
//!
//! | words | what |
//! |---|---|
//! | 16 | header: magic, version, the instance (stages, scenarios, reservoirs, passes, seed, storage and thermal limits, a CRC-32 of the scenario table), iterations done, converged, body words, the body's CRC-32, 0, the header's CRC-32 |
//! | stages | cuts per stage |
//! | 2 · iterations | each iteration's lower bound and time |
//! | iterations · passes | each iteration's path costs, in pass order |
//! | cuts · (reservoirs + 1) | the cut pool, stage by stage, in pass order |
//!
//! Rank 0 writes the header and the history; every rank writes the cuts of its share of the
//! stages, all in collective writes (`write_at_all`), into `FILE.tmp`, which rank 0 renames
//! to `FILE` once it is closed: a run killed while writing leaves the previous checkpoint as
//! it was. A resume reads the header on every rank and refuses, on every rank, a file that is
//! not a checkpoint, is of another instance, is shorter or longer than its header says, or
//! whose checksums do not match; the node leaders read the cuts into the node's pool.

use crate::{Fail, agree};
use ferrompi::io::{AccessMode, File};
use ferrompi::{Communicator, SharedWindow};
use std::path::{Path, PathBuf};

const MAGIC: u64 = u64::from_le_bytes(*b"SDDPCKPT");
const VERSION: u64 = 1;
const HEADER_WORDS: usize = 16;
/// The header's words: the instance's from `INSTANCE_AT` on, then these.
const INSTANCE_AT: usize = 2;
const ITERATIONS_AT: usize = 10;
const CONVERGED_AT: usize = 11;
const BODY_WORDS_AT: usize = 12;
const BODY_CRC_AT: usize = 13;
const HEADER_CRC_AT: usize = 15;
/// The instance's words by the flags that set them (for messages).
const INSTANCE_NAMES: [&str; 8] = [
    "--stages",
    "--scenarios",
    "--reservoirs",
    "--passes",
    "--seed",
    "--storage-max",
    "--thermal-max",
    "the scenario table's CRC-32",
];
/// Which of the instance's words are `f64` bits.
const INSTANCE_FLOATS: [bool; 8] = [false, false, false, false, false, true, true, false];

/// What a checkpoint must have been made with to be resumed: the words of the instance (what
/// the cuts and the sampled paths depend on; not the tolerance or the iteration limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instance(pub [u64; 8]);

impl Instance {
    /// The words of a run: the LP data, the sampling, and the scenario table's checksum.
    pub fn new(
        [stages, scenarios, reservoirs, passes]: [usize; 4],
        seed: u64,
        limits: [f64; 2],
        table: &[f64],
    ) -> Instance {
        let mut crc = crc32fast::Hasher::new();
        table.iter().for_each(|x| crc.update(&x.to_le_bytes()));
        Instance([
            stages as u64,
            scenarios as u64,
            reservoirs as u64,
            passes as u64,
            seed,
            limits[0].to_bits(),
            limits[1].to_bits(),
            u64::from(crc.finalize()),
        ])
    }

    fn show(word: u64, float: bool) -> String {
        if float {
            f64::from_bits(word).to_string()
        } else {
            word.to_string()
        }
    }
}

/// The solver's state after some iterations: what a checkpoint holds besides the cuts.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub iterations: usize,
    pub converged: bool,
    /// Cuts per stage.
    pub counts: Vec<usize>,
    /// Per iteration: the lower bound, the time, the path costs (`passes` of them).
    pub lower: Vec<f64>,
    pub seconds: Vec<f64>,
    pub costs: Vec<Vec<f64>>,
}

/// Where the cuts are: the node's pool (stored by the node's leader), `per_stage` values a
/// stage, `cut_len` values a cut.
pub struct Pool<'a, 'c> {
    pub window: &'a mut SharedWindow<'c, f64>,
    pub leader: bool,
    pub per_stage: usize,
    pub cut_len: usize,
}

/// `FILE.tmp`, the file a checkpoint is written to before it replaces `FILE`.
fn temporary(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// The same outcome on every rank: a failure on any rank is the lowest failing rank's message
/// on all of them.
fn agreed<T>(comm: &Communicator<'_>, mine: Result<T, String>) -> Result<T, Fail> {
    match mine {
        Ok(value) => agree(comm, None).map(|()| value),
        Err(e) => {
            agree(comm, Some(e))?;
            unreachable!("agree returns the failure it was given")
        }
    }
}

/// A file error as a line: the operation, the path and MPI's class are in it.
fn say(e: ferrompi::Error) -> String {
    e.to_string()
}

/// The history and counts as words, after the header.
fn head_words(state: &State) -> Vec<u64> {
    let mut words: Vec<u64> = state.counts.iter().map(|&c| c as u64).collect();
    words.extend(state.lower.iter().map(|x| x.to_bits()));
    words.extend(state.seconds.iter().map(|x| x.to_bits()));
    words.extend(state.costs.iter().flatten().map(|x| x.to_bits()));
    words
}

/// The stages whose cuts rank `rank` of `size` writes.
fn share(stages: usize, rank: usize, size: usize) -> std::ops::Range<usize> {
    stages * rank / size..stages * (rank + 1) / size
}

/// The CRC-32 of the body: the words after the header, then every cut (`counts` of them a
/// stage, stage `t` from `t * per_stage` in `cuts`).
fn body_crc(head: &[u64], cuts: &[f64], counts: &[usize], per_stage: usize, cut_len: usize) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    head.iter().for_each(|w| crc.update(&w.to_le_bytes()));
    for (t, &count) in counts.iter().enumerate() {
        let at = t * per_stage;
        for x in &cuts[at..at + count * cut_len] {
            crc.update(&x.to_le_bytes());
        }
    }
    crc.finalize()
}

fn header_crc(header: &[u64]) -> u64 {
    let mut crc = crc32fast::Hasher::new();
    header[..HEADER_CRC_AT]
        .iter()
        .for_each(|w| crc.update(&w.to_le_bytes()));
    u64::from(crc.finalize())
}

/// Writes `state` and the pool's cuts to `path` (through `path.tmp`, renamed on rank 0);
/// collective over `comm`. Returns the bytes written.
pub fn write(
    comm: &Communicator<'_>,
    path: &Path,
    instance: Instance,
    state: &State,
    pool: &mut Pool<'_, '_>,
) -> Result<u64, Fail> {
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let (per_stage, cut_len) = (pool.per_stage, pool.cut_len);
    let tmp = temporary(path);
    let epoch = pool.window.read()?;
    let cuts = epoch.segment(0).unwrap_or_default();
    let head = head_words(state);
    let cut_words: usize = state.counts.iter().sum::<usize>() * cut_len;
    let body_words = head.len() + cut_words;
    let mut header = [0u64; HEADER_WORDS];
    if rank == 0 {
        header[0] = MAGIC;
        header[1] = VERSION;
        header[INSTANCE_AT..ITERATIONS_AT].copy_from_slice(&instance.0);
        header[ITERATIONS_AT] = state.iterations as u64;
        header[CONVERGED_AT] = u64::from(state.converged);
        header[BODY_WORDS_AT] = body_words as u64;
        let crc = body_crc(&head, cuts, &state.counts, per_stage, cut_len);
        header[BODY_CRC_AT] = u64::from(crc);
        header[HEADER_CRC_AT] = header_crc(&header);
    }
    // A file left by a run killed while writing goes first.
    let removed = if rank == 0 {
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("checkpoint {}: {e}", tmp.display()))
            }
            _ => Ok(()),
        }
    } else {
        Ok(())
    };
    agreed(comm, removed)?;
    let mode = AccessMode::CREATE | AccessMode::EXCL | AccessMode::WRONLY;
    let file = agreed(comm, File::open(comm, &tmp, mode, None).map_err(say))?;
    // Rank 0: the header and the history, in one collective write (the others write nothing).
    let mut first: Vec<u64> = Vec::new();
    if rank == 0 {
        first.extend_from_slice(&header);
        first.extend_from_slice(&head);
    }
    agreed(comm, file.write_at_all(0, &first).map_err(say))?;
    // Every rank: the cuts of its stages, contiguous in the file.
    let mine = share(state.counts.len(), rank, size);
    let before: usize = state.counts[..mine.start].iter().sum::<usize>() * cut_len;
    let mut block: Vec<f64> = Vec::new();
    for t in mine {
        let at = t * per_stage;
        block.extend_from_slice(&cuts[at..at + state.counts[t] * cut_len]);
    }
    let offset = ((HEADER_WORDS + head.len() + before) * 8) as u64;
    agreed(comm, file.write_at_all(offset, &block).map_err(say))?;
    agreed(comm, file.close().map_err(say))?;
    let renamed = if rank == 0 {
        std::fs::rename(&tmp, path).map_err(|e| format!("checkpoint {}: {e}", path.display()))
    } else {
        Ok(())
    };
    agreed(comm, renamed)?;
    Ok(((HEADER_WORDS + body_words) * 8) as u64)
}

/// Reads the checkpoint at `path` into a state and the pool (its node leaders store the
/// cuts); collective over `comm`. Every rank gets the same state or the same refusal.
/// `iterations` is the run's limit, which the checkpoint's pool must fit.
pub fn read(
    comm: &Communicator<'_>,
    path: &Path,
    instance: Instance,
    iterations: usize,
    pool: &mut Pool<'_, '_>,
) -> Result<State, Fail> {
    let shown = path.display();
    let file = agreed(
        comm,
        File::open(comm, path, AccessMode::RDONLY, None).map_err(say),
    )?;
    let mut header = [0u64; HEADER_WORDS];
    let read = file.read_at_all(0, &mut header).map_err(say);
    let size = file.get_size().map_err(say);
    let (state, _) = agreed(
        comm,
        read.and_then(|n| check_header(&header, n, size?, instance, iterations, &shown)),
    )?;
    let mut state = state;
    let (k, passes, stages) = (state.iterations, instance.0[3] as usize, state.counts.len());
    let (per_stage, cut_len) = (pool.per_stage, pool.cut_len);
    let mut head = vec![0u64; stages + 2 * k + k * passes];
    let at = (HEADER_WORDS * 8) as u64;
    agreed(comm, file.read_at_all(at, &mut head).map_err(say))?;
    let words = |from: usize, n: usize| head[from..from + n].iter().map(|&w| f64::from_bits(w));
    let counts: Vec<usize> = head[..stages].iter().map(|&w| w as usize).collect();
    state.lower = words(stages, k).collect();
    state.seconds = words(stages + k, k).collect();
    state.costs = (0..k)
        .map(|i| words(stages + 2 * k + i * passes, passes).collect())
        .collect();
    // The cuts, stage by stage, into the node leaders' pool: a collective read per stage.
    let leader = pool.leader;
    let mut offset = at + (head.len() * 8) as u64;
    {
        let mut epoch = pool.window.write()?;
        let local = epoch.local();
        let mut outcome = Ok(());
        for (t, &count) in state.counts.iter().enumerate() {
            let len = count * cut_len;
            let into: &mut [f64] = if leader {
                &mut local[t * per_stage..t * per_stage + len]
            } else {
                &mut []
            };
            let got = file.read_at_all(offset, into).map_err(say);
            if outcome.is_ok() {
                outcome = got.and_then(|n| {
                    (n == into.len())
                        .then_some(())
                        .ok_or_else(|| format!("checkpoint {shown} is truncated in its cuts"))
                });
            }
            offset += (len * 8) as u64;
        }
        agreed(comm, outcome)?;
    }
    agreed(comm, file.close().map_err(say))?;
    let epoch = pool.window.read()?;
    let cuts = epoch.segment(0).unwrap_or_default();
    let crc = u64::from(body_crc(&head, cuts, &counts, per_stage, cut_len));
    let consistent = if crc != header[BODY_CRC_AT] {
        Err(format!(
            "checkpoint {shown} is corrupted: its body's CRC-32 is {crc:08x}, its header says {:08x}",
            header[BODY_CRC_AT]
        ))
    } else if counts != state.counts {
        Err(format!(
            "checkpoint {shown} is corrupted: its cut counts {counts:?} are not those of {k} iterations"
        ))
    } else {
        Ok(())
    };
    agreed(comm, consistent)?;
    Ok(state)
}

/// The state a header describes (counts, but no history yet) and the cut words, or why the
/// file cannot be resumed. `read` is how many header words were read, `size` the file's bytes.
fn check_header(
    header: &[u64; HEADER_WORDS],
    read: usize,
    size: u64,
    instance: Instance,
    limit: usize,
    shown: &std::path::Display<'_>,
) -> Result<(State, usize), String> {
    if read < HEADER_WORDS || size < (HEADER_WORDS * 8) as u64 {
        return Err(format!(
            "checkpoint {shown} is truncated: {size} bytes, shorter than a header"
        ));
    }
    if header[0] != MAGIC {
        return Err(format!("{shown} is not an sddp checkpoint"));
    }
    if header_crc(header) != header[HEADER_CRC_AT] {
        return Err(format!(
            "checkpoint {shown} is corrupted: its header's CRC-32 does not match"
        ));
    }
    if header[1] != VERSION {
        return Err(format!(
            "checkpoint {shown} is of version {}; this sddp reads version {VERSION}",
            header[1]
        ));
    }
    let theirs = &header[INSTANCE_AT..ITERATIONS_AT];
    for (i, (&there, &here)) in theirs.iter().zip(&instance.0).enumerate() {
        if there != here {
            let float = INSTANCE_FLOATS[i];
            return Err(format!(
                "checkpoint {shown} is of another instance: {} {} there, {} here",
                INSTANCE_NAMES[i],
                Instance::show(there, float),
                Instance::show(here, float)
            ));
        }
    }
    let (stages, passes) = (instance.0[0] as usize, instance.0[3] as usize);
    let k = usize::try_from(header[ITERATIONS_AT]).unwrap_or(usize::MAX);
    if k > limit {
        return Err(format!(
            "checkpoint {shown} holds {k} iterations: --iterations must be at least {k}"
        ));
    }
    // Every stage but the last gains `passes` cuts an iteration.
    let counts: Vec<usize> = (0..stages)
        .map(|t| if t + 1 < stages { k * passes } else { 0 })
        .collect();
    let cut_len = instance.0[2] as usize + 1;
    let cut_words = counts.iter().sum::<usize>() * cut_len;
    let body = stages + 2 * k + k * passes + cut_words;
    if header[BODY_WORDS_AT] != body as u64 {
        return Err(format!(
            "checkpoint {shown} is corrupted: its header says {} body words, {k} iterations make {body}",
            header[BODY_WORDS_AT]
        ));
    }
    let want = ((HEADER_WORDS + body) * 8) as u64;
    if size != want {
        return Err(format!(
            "checkpoint {shown} is {}: {size} bytes, its header says {want}",
            if size < want { "truncated" } else { "too long" }
        ));
    }
    let state = State {
        iterations: k,
        converged: header[CONVERGED_AT] != 0,
        counts,
        ..State::default()
    };
    Ok((state, cut_words))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_stage_once() {
        for stages in 1..20 {
            for size in 1..6 {
                let all: Vec<usize> = (0..size).flat_map(|r| share(stages, r, size)).collect();
                assert_eq!(all, (0..stages).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn a_header_is_checked_word_by_word() {
        let instance = Instance::new([3, 2, 1, 2], 7, [200.0, 60.0], &[1.0, 2.0]);
        let mut header = [0u64; HEADER_WORDS];
        header[0] = MAGIC;
        header[1] = VERSION;
        header[INSTANCE_AT..ITERATIONS_AT].copy_from_slice(&instance.0);
        header[ITERATIONS_AT] = 1;
        // Stages 0 and 1 hold 2 cuts of 2 values: 3 + 2 + 2 + 8 words of body.
        header[BODY_WORDS_AT] = 15;
        header[HEADER_CRC_AT] = header_crc(&header);
        let path = PathBuf::from("c");
        let shown = path.display();
        let size = ((HEADER_WORDS + 15) * 8) as u64;
        let (state, cut_words) = check_header(&header, 16, size, instance, 5, &shown).unwrap();
        assert_eq!((state.counts, cut_words), (vec![2, 2, 0], 8));
        let refused = |h: &[u64; HEADER_WORDS], size: u64, inst: Instance, limit: usize| {
            check_header(h, 16, size, inst, limit, &shown).unwrap_err()
        };
        assert!(refused(&header, size - 8, instance, 5).contains("truncated"));
        assert!(refused(&header, size + 8, instance, 5).contains("too long"));
        assert!(refused(&header, size, instance, 0).contains("at least 1"));
        let other = Instance::new([3, 2, 1, 2], 7, [150.0, 60.0], &[1.0, 2.0]);
        assert!(refused(&header, size, other, 5).contains("--storage-max 200 there, 150 here"));
        let table = Instance::new([3, 2, 1, 2], 7, [200.0, 60.0], &[1.0, 2.5]);
        assert!(refused(&header, size, table, 5).contains("the scenario table's CRC-32"));
        let mut flipped = header;
        flipped[ITERATIONS_AT] ^= 1 << 40;
        assert!(refused(&flipped, size, instance, 5).contains("header's CRC-32"));
        let mut alien = header;
        alien[0] = 0;
        assert!(refused(&alien, size, instance, 5).contains("not an sddp checkpoint"));
        assert!(
            check_header(&header, 3, 24, instance, 5, &shown)
                .unwrap_err()
                .contains("shorter than a header")
        );
    }

    #[test]
    fn temporary_is_beside_the_file() {
        assert_eq!(
            temporary(Path::new("/x/run.ckpt")),
            PathBuf::from("/x/run.ckpt.tmp")
        );
    }
}
