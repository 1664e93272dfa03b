//! Builds the comparison report from the tables `benches/comparison.rs` wrote: reads every
//! `*.csv` in `$FERROMPI_BENCH_DIR` (default `target/bench`), and writes `report.md` there (one
//! table of ferrompi / C ratios across implementations and rank counts, the rows over target,
//! the rows with a Rust ffi control split into Rust ffi / C and ferrompi / Rust ffi, and each
//! run's table) and plots of time against message size on log scales, ferrompi and C
//! on the same axes for every implementation (`pingpong.svg` and `pingpong.png`,
//! `allreduce.svg`, …, drawn with plotters: SVG, and PNG with text from a font file through
//! ab_glyph, neither needing a system library). Makes no MPI calls; `tools/bench.sh` runs it
//! last (`cargo run -p ferrompi-bench-report --release`).
//!
//! The PNG text needs a TrueType font: `$FERROMPI_PLOT_FONT`, else DejaVu Sans where Debian,
//! Fedora or Arch put it (`tools/setup.sh` installs `fonts-dejavu-core`). Without one the PNGs
//! are left out with a note; the SVGs never need one. `FERROMPI_PLOT_PNG=0` leaves them out too
//! (the documentation embeds the SVGs: `tools/docs-regen.sh`).

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
struct Row {
    implementation: String,
    ranks: u32,
    group: String,
    operation: String,
    bytes: u64,
    ours: f64,
    theirs: f64,
    ratio: f64,
    target: f64,
    allocations: u64,
    /// "dedicated" (ranks fit the cores) or "oversubscribed"; empty in older tables.
    mode: String,
    /// Median of the paired differences ferrompi − C, ns per operation (NaN in older tables).
    difference: f64,
    /// Where the row has the Rust ffi control (the same MPI calls made from Rust without the
    /// binding): Rust ffi / C, ferrompi / Rust ffi, and the paired difference ferrompi − Rust
    /// ffi in ns. `None` elsewhere and in older tables.
    control: Option<(f64, f64, f64)>,
}

/// An implementation as its users write it: tables written before the benchmark used the
/// names users know say `OpenMpi 4.1.4` and `Mpich 4.0.2`.
fn users_name(implementation: &str) -> String {
    let (family, version) = implementation
        .split_once(' ')
        .unwrap_or((implementation, ""));
    let family = match family {
        "OpenMpi" => "Open MPI",
        "Mpich" => "MPICH",
        "StandardAbi" => "MPI-5 ABI",
        other => other,
    };
    format!("{family} {version}").trim_end().to_string()
}

fn parse(line: &str) -> Option<Row> {
    let f: Vec<&str> = line.split(',').collect();
    if !(10..=15).contains(&f.len()) {
        return None;
    }
    Some(Row {
        implementation: users_name(f[0]),
        ranks: f[1].parse().ok()?,
        group: f[2].into(),
        operation: f[3].into(),
        bytes: f[4].parse().ok()?,
        ours: f[5].parse().ok()?,
        theirs: f[6].parse().ok()?,
        ratio: f[7].parse().ok()?,
        target: f[8].parse().ok()?,
        allocations: f[9].parse().ok()?,
        mode: f.get(10).map_or(String::new(), |m| (*m).into()),
        difference: f.get(11).and_then(|d| d.parse().ok()).unwrap_or(f64::NAN),
        control: match (f.get(12), f.get(13), f.get(14)) {
            (Some(a), Some(b), Some(c)) => match (a.parse(), b.parse(), c.parse()) {
                (Ok(a), Ok(b), Ok(c)) => Some((a, b, c)),
                _ => None,
            },
            _ => None,
        },
    })
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .filter(|p| p.file_stem().is_some_and(|s| s != "report"))
                .collect()
        })
        .unwrap_or_default();
    // By implementation, then rank count as a number (`openmpi-n2` before `openmpi-n16`).
    found.sort_by_key(|p| {
        let stem = p
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        match stem
            .rsplit_once("-n")
            .map(|(name, n)| (name, n.parse::<u32>()))
        {
            Some((name, Ok(ranks))) => (name.to_string(), ranks),
            _ => (stem, 0),
        }
    });
    found
}

/// The machine the tables were measured on: `machine.txt` beside them where
/// `tools/bench-run.sh` ran them on another machine (its lines: the machine, then each
/// implementation's version and launcher), else this one.
fn machine(dir: &Path) -> String {
    if let Ok(text) = std::fs::read_to_string(dir.join("machine.txt")) {
        return text.lines().map(str::trim).collect::<Vec<_>>().join("; ");
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown CPU".into(), |m| m.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let os = std::fs::read_to_string("/etc/os-release")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map_or("unknown OS".into(), |s| s.trim_matches('"').to_string());
    format!("{model}, {cores} cores, {os}")
}

/// The size of every plot, in pixels (the SVG's user units).
const SIZE: (u32, u32) = (760, 440);

/// Writes `<stem>.svg` and, when a font was registered, `<stem>.png`: the same plot on both
/// backends.
fn plot(
    dir: &Path,
    stem: &str,
    chart: &Chart,
    png: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let svg = dir.join(format!("{stem}.svg"));
    draw(SVGBackend::new(&svg, SIZE).into_drawing_area(), chart)?;
    if png {
        let png = dir.join(format!("{stem}.png"));
        draw(BitMapBackend::new(&png, SIZE).into_drawing_area(), chart)?;
    }
    Ok(())
}

/// What a plot's x axis shows.
#[derive(Clone, Copy)]
enum Axis {
    Bytes,
    Ranks,
}

/// What a plot's y axis shows.
#[derive(Clone, Copy)]
enum Values {
    /// Microseconds per operation, on a log scale.
    Time,
    /// ferrompi / C, on a linear scale, with the band from 1 to the row's target shaded.
    Ratio { target: f64 },
}

/// One line of a plot.
struct Line {
    name: String,
    points: Vec<(f64, f64)>,
    /// Drawn dashed (the C side), solid otherwise.
    dashed: bool,
    /// The line's colour, one per implementation.
    colour: usize,
}

/// A plot: its title, axes and lines.
struct Chart {
    title: String,
    x: Axis,
    values: Values,
    lines: Vec<Line>,
}

/// A message size as people write it: `8 B`, `32 KiB`, `4 MiB`.
fn size_label(bytes: f64) -> String {
    match bytes {
        b if b >= 1048576.0 => format!("{} MiB", b / 1048576.0),
        b if b >= 1024.0 => format!("{} KiB", b / 1024.0),
        b => format!("{b} B"),
    }
}

/// Registers a TrueType font as plotters' `sans-serif` for the bitmap backend; false when none
/// is found (see the module docs).
fn register_font() -> bool {
    let candidates = std::env::var_os("FERROMPI_PLOT_FONT")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            [
                "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
                "/usr/share/fonts/TTF/DejaVuSans.ttf",
            ]
            .map(PathBuf::from),
        );
    for path in candidates {
        if let Ok(bytes) = std::fs::read(&path) {
            // plotters keeps the font for the program's life.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                return true;
            }
        }
    }
    false
}

/// Draws `chart`: a tick and a label at every x the data has (message sizes or rank counts),
/// the axes fitted to the data, ferrompi solid and C dashed in one colour per implementation,
/// with legend samples drawn as the lines are.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, plotters::coord::Shift>,
    chart: &Chart,
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    let points = || chart.lines.iter().flat_map(|l| l.points.iter().copied());
    let (y0, y1) = points().fold((f64::MAX, f64::MIN), |(a, b), (_, y)| (a.min(y), b.max(y)));
    let mut ticks: Vec<f64> = points().map(|(x, _)| x).collect();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    let (x0, x1) = (ticks[0], ticks[ticks.len() - 1]);
    // A little room either side of the first and last tick, in the log scale's terms.
    let x_range = (x0 / 1.25..x1 * 1.25).log_scale().with_key_points(ticks);
    root.fill(&WHITE)?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(&chart.title, ("sans-serif", 17))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60);
    let x_desc = match chart.x {
        Axis::Bytes => "message size",
        Axis::Ranks => "ranks",
    };
    let x_label = |x: &f64| match chart.x {
        Axis::Bytes => size_label(*x),
        Axis::Ranks => format!("{x}"),
    };
    let colours = [BLUE, RED, GREEN, MAGENTA, CYAN, BLACK];
    macro_rules! lines {
        ($plot:expr) => {
            for line in &chart.lines {
                let style = colours[line.colour % colours.len()].stroke_width(2);
                let pts = line.points.iter().copied();
                if line.dashed {
                    $plot
                        .draw_series(DashedLineSeries::new(pts, 6, 4, style))?
                        .label(line.name.as_str())
                        .legend(move |(x, y)| {
                            DashedPathElement::new(vec![(x, y), (x + 24, y)], 6, 4, style)
                        });
                } else {
                    $plot
                        .draw_series(LineSeries::new(pts, style).point_size(2))?
                        .label(line.name.as_str())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 24, y)], style));
                }
            }
            $plot
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()?;
        };
    }
    match chart.values {
        // Times spanning a decade or more on a log scale; less, on a linear one, whose labels
        // then say something.
        Values::Time if y1 >= 10.0 * y0 => {
            let mut plot =
                builder.build_cartesian_2d(x_range, (y0 / 1.25..y1 * 1.6).log_scale())?;
            plot.configure_mesh()
                .x_desc(x_desc)
                .y_desc("µs per operation")
                .x_label_formatter(&x_label)
                .y_label_formatter(&|y| format!("{y}"))
                .draw()?;
            lines!(plot);
        }
        Values::Time => {
            let mut plot = builder.build_cartesian_2d(x_range, 0.0..y1 * 1.45)?;
            plot.configure_mesh()
                .x_desc(x_desc)
                .y_desc("µs per operation")
                .x_label_formatter(&x_label)
                .y_label_formatter(&|y| format!("{y:.2}"))
                .draw()?;
            lines!(plot);
        }
        Values::Ratio { target } => {
            let low = y0.min(1.0) - 0.01;
            let high = y1.max(target) + (y1.max(target) - low) * 0.35;
            let mut plot = builder.build_cartesian_2d(x_range, low..high)?;
            plot.configure_mesh()
                .x_desc(x_desc)
                .y_desc("ferrompi / C")
                .x_label_formatter(&x_label)
                .y_labels(8)
                .y_label_formatter(&|y| format!("{y:.3}"))
                .draw()?;
            // The band a row must stay in, and parity.
            plot.draw_series(std::iter::once(Rectangle::new(
                [(x0 / 1.25, 1.0), (x1 * 1.25, target)],
                GREEN.mix(0.15).filled(),
            )))?
            .label(format!("within target (1 to {target})"))
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 4), (x + 24, y + 4)], GREEN.mix(0.3).filled())
            });
            plot.draw_series(DashedLineSeries::new(
                [(x0 / 1.25, 1.0), (x1 * 1.25, 1.0)],
                3,
                3,
                BLACK.stroke_width(1),
            ))?;
            lines!(plot);
        }
    }
    root.present()?;
    Ok(())
}

/// The implementations of `rows`, sorted, each with its colour (its index).
fn implementations(rows: &[Row]) -> Vec<&str> {
    let mut names: Vec<&str> = rows.iter().map(|r| r.implementation.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// One plot per (operation, size of 0, 8 or 65536 bytes) measured at more than one rank count
/// with every rank on a core of its own: time against ranks, ferrompi and C side by side per
/// implementation (`<group>-<bytes>B-by-ranks.svg`). Oversubscribed runs are left out: ranks
/// sharing cores measure the scheduler, not the collective. Returns the markdown that shows
/// them.
fn scaling(dir: &Path, rows: &[Row], png: bool) -> String {
    let dedicated: Vec<&Row> = rows.iter().filter(|r| r.mode != "oversubscribed").collect();
    let mut md = String::new();
    let mut keys: Vec<(String, u64, String)> = Vec::new();
    for r in &dedicated {
        let mut counts: Vec<u32> = dedicated
            .iter()
            .filter(|o| {
                o.group == r.group && o.bytes == r.bytes && o.implementation == r.implementation
            })
            .map(|o| o.ranks)
            .collect();
        counts.sort_unstable();
        counts.dedup();
        // The smallest and a middle size: enough to see latency and bandwidth grow.
        let size = matches!(r.bytes, 0 | 8 | 65536);
        if size && counts.len() > 1 && !keys.iter().any(|(g, b, _)| *g == r.group && *b == r.bytes)
        {
            keys.push((r.group.clone(), r.bytes, r.operation.clone()));
        }
    }
    if keys.is_empty() {
        let over = rows.iter().any(|r| r.mode == "oversubscribed");
        if over {
            md += "
## Scaling with ranks

No plot: at most one rank count ran with a core \
                   per rank (oversubscribed runs are left out).
";
        }
        return md;
    }
    md += "
## Scaling with ranks (dedicated cores)
";
    let all = implementations(rows);
    for (group, bytes, operation) in &keys {
        let mut lines = Vec::new();
        for (colour, implementation) in all.iter().enumerate() {
            let pick = |c: bool| -> Vec<(f64, f64)> {
                let mut points: Vec<(f64, f64)> = dedicated
                    .iter()
                    .filter(|r| {
                        &r.group == group
                            && r.bytes == *bytes
                            && r.implementation == *implementation
                    })
                    .map(|r| (f64::from(r.ranks), if c { r.theirs } else { r.ours }))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                points
            };
            for (side, c) in [("ferrompi", false), ("C", true)] {
                let points = pick(c);
                if !points.is_empty() {
                    lines.push(Line {
                        name: format!("{implementation} {side}"),
                        points,
                        dashed: c,
                        colour,
                    });
                }
            }
        }
        let stem = format!("{group}-{bytes}B-by-ranks");
        let title = format!("{operation}, {}, by ranks", size_label(*bytes as f64));
        let chart = Chart {
            title: title.clone(),
            x: Axis::Ranks,
            values: Values::Time,
            lines,
        };
        plot(dir, &stem, &chart, png).expect("writing a plot");
        let _ = write!(md, "\n![{title}]({stem}.svg)\n");
    }
    md
}

/// Per operation measured at several sizes with 2 ranks: time against size, ferrompi and C
/// per implementation (`<group>-by-size.svg`), and ferrompi / C with the target band
/// (`<group>-ratio-by-size.svg`). Returns the markdown that shows them.
fn by_size(dir: &Path, rows: &[Row], png: bool) -> String {
    let mut md = String::new();
    let mut groups: Vec<&Row> = Vec::new();
    for r in rows.iter().filter(|r| r.ranks == 2 && r.bytes > 0) {
        let sizes = rows
            .iter()
            .filter(|o| o.group == r.group && o.ranks == 2 && o.implementation == r.implementation)
            .count();
        if sizes > 1 && !groups.iter().any(|g| g.group == r.group) {
            groups.push(r);
        }
    }
    let all = implementations(rows);
    for first in groups {
        let group = first.group.as_str();
        let oversubscribed = rows
            .iter()
            .any(|r| r.group == group && r.ranks == 2 && r.mode == "oversubscribed");
        let ranks = if oversubscribed {
            "2 ranks, oversubscribed"
        } else {
            "2 ranks"
        };
        let (mut times, mut ratios) = (Vec::new(), Vec::new());
        for (colour, implementation) in all.iter().enumerate() {
            let mine: Vec<&Row> = rows
                .iter()
                .filter(|r| {
                    r.group == group
                        && &r.implementation == implementation
                        && r.ranks == 2
                        && r.bytes > 0
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            let series = |f: &dyn Fn(&Row) -> f64| -> Vec<(f64, f64)> {
                mine.iter().map(|r| (r.bytes as f64, f(r))).collect()
            };
            times.push(Line {
                name: format!("{implementation} ferrompi"),
                points: series(&|r| r.ours),
                dashed: false,
                colour,
            });
            times.push(Line {
                name: format!("{implementation} C"),
                points: series(&|r| r.theirs),
                dashed: true,
                colour,
            });
            ratios.push(Line {
                name: implementation.to_string(),
                points: series(&|r| r.ratio),
                dashed: false,
                colour,
            });
        }
        let title = format!("{}, {ranks}", first.operation);
        let chart = Chart {
            title: title.clone(),
            x: Axis::Bytes,
            values: Values::Time,
            lines: times,
        };
        let stem = format!("{group}-by-size");
        plot(dir, &stem, &chart, png).expect("writing a plot");
        let _ = write!(md, "\n![{title}]({stem}.svg)\n");
        let ratio_title = format!("{}, {ranks}: ferrompi / C", first.operation);
        let chart = Chart {
            title: ratio_title.clone(),
            x: Axis::Bytes,
            values: Values::Ratio {
                target: first.target,
            },
            lines: ratios,
        };
        let stem = format!("{group}-ratio-by-size");
        plot(dir, &stem, &chart, png).expect("writing a plot");
        let _ = write!(md, "\n![{ratio_title}]({stem}.svg)\n");
    }
    md
}

/// The rows with the Rust ffi control, split in two: what Rust calling MPI costs against C by
/// itself, and what the binding adds to that.
fn controls(rows: &[Row]) -> String {
    let with: Vec<(&Row, (f64, f64, f64))> = rows
        .iter()
        .filter_map(|r| r.control.map(|c| (r, c)))
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n## The binding's own cost\n\nBeside every row of 4096 bytes or fewer, and the \
         windowed bandwidth, the 8-request exchange and put/get at every size, the benchmark \
         also runs a control: the same MPI calls made from Rust through `ffi`, with the \
         binding's datatype and communicator or window but none of its checks. *Rust ffi / C* \
         is what Rust calling MPI costs by itself (code layout, buffers, placement): a second \
         implementation that adds nothing, so its rows over target are the comparison's, not \
         a binding's. *ferrompi / Rust ffi* is the binding's own work (checks, thread gate, \
         request bookkeeping). Each is the median of its own interleaved quartets, so the two \
         need not multiply to *ferrompi / C*.\n\n\
         | run | rows with the control | ferrompi / C over target | Rust ffi / C over target \
         | ferrompi / Rust ffi over target |\n|---|---:|---:|---:|---:|\n",
    );
    let mut runs: Vec<(&str, u32)> = with
        .iter()
        .map(|(r, _)| (r.implementation.as_str(), r.ranks))
        .collect();
    runs.sort_unstable();
    runs.dedup();
    for (implementation, ranks) in runs {
        let rows: Vec<_> = with
            .iter()
            .filter(|(r, _)| r.implementation == implementation && r.ranks == ranks)
            .collect();
        let mut over = [0; 3];
        for (r, (ffi, own, _)) in &rows {
            for (count, ratio) in over.iter_mut().zip([r.ratio, *ffi, *own]) {
                *count += usize::from(ratio > r.target);
            }
        }
        let [ours, control, own] = over;
        let _ = writeln!(
            md,
            "| {implementation} {ranks} ranks | {} | {ours} | {control} | {own} |",
            rows.len()
        );
    }
    md += "\n| run | operation | bytes | ferrompi / C | Rust ffi / C | ferrompi / Rust ffi \
           | ferrompi − Rust ffi, ns |\n|---|---|---:|---:|---:|---:|---:|\n";
    for (r, (ffi, own, ns)) in with {
        let _ = writeln!(
            md,
            "| {} {} ranks | {} | {} | {:.3} | {ffi:.3} | {own:.3} | {ns:+.1} |",
            r.implementation, r.ranks, r.operation, r.bytes, r.ratio
        );
    }
    md
}

fn main() {
    let svg_only = std::env::var("FERROMPI_PLOT_PNG").is_ok_and(|v| v == "0");
    let font = register_font();
    let png = font && !svg_only;
    if !font {
        println!("note: no TrueType font found (set FERROMPI_PLOT_FONT); writing SVG plots only");
    }
    let dir = PathBuf::from(std::env::var("FERROMPI_BENCH_DIR").unwrap_or("target/bench".into()));
    let rows: Vec<Row> = files(&dir, "csv")
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .lines()
                .skip(1)
                // A row it cannot read (a comma in an operation's name shifts every field)
                // would drop out of the tables and plots unseen: stop instead.
                .map(|line| {
                    parse(line).unwrap_or_else(|| {
                        panic!("{}: a row the report cannot read: {line}", p.display())
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect();
    if rows.is_empty() {
        eprintln!(
            "no benchmark tables in {}: run tools/bench.sh",
            dir.display()
        );
        return;
    }
    let mut runs: Vec<(String, u32)> = rows
        .iter()
        .map(|r| (r.implementation.clone(), r.ranks))
        .collect();
    runs.sort();
    runs.dedup();

    let mut md = format!("# ferrompi against C\n\nMachine: {}.\n\n", machine(&dir));
    md += "ferrompi time / C time per operation, each the median over interleaved quartets \
           (ferrompi, C, C, ferrompi) of blocks of about a millisecond, both sides on the same \
           buffers, put and get on one window (each on its own in the shared-window rows), \
           C built with -fno-plt to call into libmpi through the GOT as rustc does (the call-form \
           tables under \"Each run\" give what C's default PLT call saves); \
           **bold** is over its target \
           (1.02 for blocking and persistent operations, 1.05 for nonblocking patterns) or \
           allocated on the hot path.\n\n| operation | bytes |";
    for (implementation, ranks) in &runs {
        let _ = write!(md, " {implementation} {ranks} ranks |");
    }
    // How each run's ranks were placed, in the header's order ("dedicated" when they fit the
    // cores; oversubscribed Open MPI also yields the CPU when idle).
    let modes: Vec<String> = runs
        .iter()
        .filter_map(|(implementation, ranks)| {
            rows.iter()
                .find(|r| &r.implementation == implementation && r.ranks == *ranks)
                .filter(|r| !r.mode.is_empty())
                .map(|r| format!("{implementation} {ranks} ranks: {}", r.mode))
        })
        .collect();
    let launch = if modes.is_empty() {
        String::new()
    } else {
        format!("Launch modes: {}.\n\n", modes.join("; "))
    };
    md = md.replacen(
        "| operation | bytes |",
        &format!("{launch}| operation | bytes |"),
        1,
    );
    md += "\n|---|---:|";
    md += &"---:|".repeat(runs.len());
    md += "\n";
    let mut keys: BTreeMap<(usize, u64), String> = BTreeMap::new();
    let order: Vec<String> = {
        let mut seen = Vec::new();
        for r in &rows {
            if !seen.contains(&r.operation) {
                seen.push(r.operation.clone());
            }
        }
        seen
    };
    for r in &rows {
        let position = order.iter().position(|o| o == &r.operation).unwrap_or(0);
        keys.insert((position, r.bytes), r.operation.clone());
    }
    let mut over = Vec::new();
    for ((_, bytes), operation) in &keys {
        let _ = write!(md, "| {operation} | {bytes} |");
        for (implementation, ranks) in &runs {
            let cell = rows.iter().find(|r| {
                &r.operation == operation
                    && r.bytes == *bytes
                    && &r.implementation == implementation
                    && r.ranks == *ranks
            });
            match cell {
                Some(r) if r.ratio > r.target || r.allocations > 0 => {
                    let _ = write!(md, " **{:.3}** |", r.ratio);
                    over.push(r.clone());
                }
                Some(r) => {
                    let _ = write!(md, " {:.3} |", r.ratio);
                }
                None => md += " |",
            }
        }
        md += "\n";
    }
    md += "\n## Over target\n\n";
    if over.is_empty() {
        md += "None.\n";
    }
    for r in &over {
        let control = r.control.map_or(String::new(), |(ffi, own, ns)| {
            format!("; Rust ffi / C {ffi:.3}, ferrompi / Rust ffi {own:.3} ({ns:+.1} ns)")
        });
        let _ = writeln!(
            md,
            "- {} {} ranks, {} at {} B: {:.3} (target {:.2}; {:.2} µs against {:.2} µs; \
             paired difference {:+.0} ns; {} allocations{control})",
            r.implementation,
            r.ranks,
            r.operation,
            r.bytes,
            r.ratio,
            r.target,
            r.ours,
            r.theirs,
            r.difference,
            r.allocations
        );
    }
    md += &controls(&rows);

    md += &by_size(&dir, &rows, png);
    md += &scaling(&dir, &rows, png);
    md += "\n## Each run\n\n";
    for p in files(&dir, "md") {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        // Each table's heading names its implementation as users write it.
        for line in text.lines() {
            match line.strip_prefix("### ") {
                Some(heading) => {
                    let (name, rest) = heading.split_once(',').unwrap_or((heading, ""));
                    let _ = writeln!(
                        md,
                        "### {}{}{rest}",
                        users_name(name),
                        if rest.is_empty() { "" } else { "," }
                    );
                }
                None => {
                    md += line;
                    md += "\n";
                }
            }
        }
        md += "\n";
    }
    let out = dir.join("report.md");
    std::fs::write(&out, &md).expect("writing the report");
    println!("{md}\nwritten to {}", out.display());
}
