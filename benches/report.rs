//! Builds the comparison report from the tables `benches/comparison.rs` wrote: reads every
//! `*.csv` in `$FERROMPI_BENCH_DIR` (default `target/bench`), and writes `report.md` there (one
//! table of ferrompi / C ratios across implementations and rank counts, the rows over target,
//! and each run's table) and two plots of time against message size, `pingpong.svg` and
//! `allreduce.svg`. Makes no MPI calls; `tools/bench.sh` runs it last.

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
}

fn parse(line: &str) -> Option<Row> {
    let f: Vec<&str> = line.split(',').collect();
    if f.len() != 10 {
        return None;
    }
    Some(Row {
        implementation: f[0].into(),
        ranks: f[1].parse().ok()?,
        group: f[2].into(),
        operation: f[3].into(),
        bytes: f[4].parse().ok()?,
        ours: f[5].parse().ok()?,
        theirs: f[6].parse().ok()?,
        ratio: f[7].parse().ok()?,
        target: f[8].parse().ok()?,
        allocations: f[9].parse().ok()?,
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
    found.sort();
    found
}

fn machine() -> String {
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

/// A log-log plot of time per operation against message size, one line per series.
fn svg(title: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 420.0, 70.0, 210.0, 40.0, 50.0);
    let points = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x.log2());
        x1 = x1.max(x.log2());
        y0 = y0.min(y.log10());
        y1 = y1.max(y.log10());
    }
    let (y0, y1) = (y0.floor(), y1.ceil().max(y0.floor() + 1.0));
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let px = |x: f64| left + (x.log2() - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - (y.log10() - y0) / (y1 - y0) * (h - top - bottom);
    let colors = [
        "#1f77b4", "#aec7e8", "#d62728", "#ff9896", "#2ca02c", "#98df8a",
    ];
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{title}</text>\n",
        (w - right + left) / 2.0
    );
    let mut decade = y0;
    while decade <= y1 {
        let y = py(10f64.powf(decade));
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - right,
            left - 6.0,
            y + 4.0,
            10f64.powf(decade)
        );
        decade += 1.0;
    }
    let mut exp = x0.ceil() as i32;
    while f64::from(exp) <= x1 {
        let x = px(2f64.powi(exp));
        let label = match exp {
            e if e >= 20 => format!("{}M", 1 << (e - 20)),
            e if e >= 10 => format!("{}K", 1 << (e - 10)),
            e => format!("{}", 1 << e),
        };
        if exp % 2 == 1 || x1 - x0 < 8.0 {
            let _ = writeln!(
                out,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                h - bottom + 16.0
            );
        }
        exp += 1;
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">message size (bytes)</text>\
         <text x=\"16\" y=\"{:.1}\" transform=\"rotate(-90 16 {:.1})\" text-anchor=\"middle\">µs per operation (log)</text>\
         <rect x=\"{left}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#444\"/>",
        (w - right + left) / 2.0,
        h - 12.0,
        (h - bottom + top) / 2.0,
        (h - bottom + top) / 2.0,
        w - left - right,
        h - top - bottom
    );
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let dash = if name.contains(" C") {
            " stroke-dasharray=\"5 3\""
        } else {
            ""
        };
        let path: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            path.join(" ")
        );
        let ly = top + 16.0 + 18.0 * i as f64;
        let _ = writeln!(
            out,
            "<line x1=\"{:.1}\" y1=\"{ly:.1}\" x2=\"{:.1}\" y2=\"{ly:.1}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{name}</text>",
            w - right + 12.0,
            w - right + 36.0,
            w - right + 42.0,
            ly + 4.0
        );
    }
    out + "</svg>\n"
}

fn main() {
    let dir = PathBuf::from(std::env::var("FERROMPI_BENCH_DIR").unwrap_or("target/bench".into()));
    let rows: Vec<Row> = files(&dir, "csv")
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .lines()
                .skip(1)
                .filter_map(parse)
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

    let mut md = format!("# ferrompi against C\n\nMachine: {}.\n\n", machine());
    md += "ferrompi time / C time per operation, each the median of interleaved runs \
           (C, ferrompi, ferrompi, C, …) of about a millisecond; **bold** is over its target \
           (1.02 for blocking and persistent operations, 1.05 for nonblocking patterns) or \
           allocated on the hot path.\n\n| operation | bytes |";
    for (implementation, ranks) in &runs {
        let _ = write!(md, " {implementation} {ranks} ranks |");
    }
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
        let _ = writeln!(
            md,
            "- {} {} ranks, {} at {} B: {:.3} (target {:.2}; {:.2} µs against {:.2} µs; {} allocations)",
            r.implementation,
            r.ranks,
            r.operation,
            r.bytes,
            r.ratio,
            r.target,
            r.ours,
            r.theirs,
            r.allocations
        );
    }

    for (group, title) in [
        ("pingpong", "Ping-pong round trip, 2 ranks"),
        ("allreduce", "Blocking allreduce of f64, 2 ranks"),
    ] {
        let mut series = Vec::new();
        for (implementation, ranks) in runs.iter().filter(|r| r.1 == 2) {
            let pick = |c: bool| -> Vec<(f64, f64)> {
                rows.iter()
                    .filter(|r| {
                        r.group == group
                            && &r.implementation == implementation
                            && r.ranks == *ranks
                            && r.bytes > 0
                    })
                    .map(|r| (r.bytes as f64, if c { r.theirs } else { r.ours }))
                    .collect()
            };
            series.push((format!("{implementation} ferrompi"), pick(false)));
            series.push((format!("{implementation} C"), pick(true)));
        }
        if series.iter().any(|s| !s.1.is_empty()) {
            let file = format!("{group}.svg");
            std::fs::write(dir.join(&file), svg(title, &series)).expect("writing a plot");
            let _ = write!(md, "\n![{title}]({file})\n");
        }
    }
    md += "\n## Each run\n\n";
    for p in files(&dir, "md") {
        md += &std::fs::read_to_string(&p).unwrap_or_default();
        md += "\n";
    }
    let out = dir.join("report.md");
    std::fs::write(&out, &md).expect("writing the report");
    println!("{md}\nwritten to {}", out.display());
}
