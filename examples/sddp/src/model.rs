//! The hydrothermal dispatch model: reservoirs, thermal plants, demand, inflow scenarios, and
//! the stage linear programs with their future-cost cuts.
//!
//! Stage `t`, scenario `s`, incoming storage `v_in` (one entry per reservoir):
//!
//! ```text
//! minimise   Σ_j c_j g_j + c_def d + ε Σ_i s_i + θ
//! subject to v_i + q_i + s_i         = v_in_i + a_{t,s,i}     (water balance, dual → cut slope)
//!            Σ_i ρ_i q_i + Σ_j g_j + d = D_t                   (demand)
//!            θ ≥ α_k + β_k · v                                 (every cut k of stage t)
//!            0 ≤ v ≤ v_max, 0 ≤ q ≤ q_max, s ≥ 0, 0 ≤ g ≤ g_max, d ≥ 0, θ ≥ 0
//! ```
//!
//! `v` is the storage at the end of the stage (the state), `q` turbined flow, `s` spill, `g`
//! thermal generation, `d` deficit, `θ` the future cost. Spill and deficit keep every stage
//! feasible for any storage and any nonnegative inflow.

use crate::lp::{Basis, Lp, Row, Start};

/// One reservoir with its hydro plant.
#[derive(Debug, Clone)]
pub struct Reservoir {
    pub storage_max: f64,
    pub storage_initial: f64,
    pub turbine_max: f64,
    /// MW per unit of turbined flow.
    pub productivity: f64,
    /// Mean inflow per stage before the seasonal factor.
    pub inflow_mean: f64,
}

/// One thermal plant.
#[derive(Debug, Clone)]
pub struct Thermal {
    pub capacity: f64,
    pub cost: f64,
}

/// The whole instance.
#[derive(Debug, Clone)]
pub struct Instance {
    pub stages: usize,
    /// Inflow scenarios (openings) per stage.
    pub scenarios: usize,
    pub reservoirs: Vec<Reservoir>,
    pub thermals: Vec<Thermal>,
    pub deficit_cost: f64,
    pub spill_cost: f64,
    /// Demand per stage.
    pub demand: Vec<f64>,
    /// Coefficient of variation of the inflows.
    pub inflow_cv: f64,
}

/// The most values one of the solver's tables shared per node (the scenario table, the cut
/// pool) may hold: 2^28, 2 GiB of `f64`. Larger ones are refused with a message on every rank,
/// before anything is allocated.
pub const MAX_TABLE_VALUES: usize = 1 << 28;

/// The most stages of an instance (a weekly horizon of 190 years): the per-stage vectors are
/// allocated on every rank.
pub const MAX_STAGES: usize = 10_000;

/// `factors` multiplied, if the product fits `usize` and [`MAX_TABLE_VALUES`]; otherwise a
/// message naming `what` and the factors.
pub fn table_values(what: &str, factors: &[(&str, usize)]) -> Result<usize, String> {
    factors
        .iter()
        .try_fold(1usize, |product, &(_, f)| product.checked_mul(f))
        .filter(|&n| n <= MAX_TABLE_VALUES)
        .ok_or_else(|| {
            let named: Vec<String> = factors.iter().map(|(n, f)| format!("{f} {n}")).collect();
            format!(
                "{what} of {} is more than {MAX_TABLE_VALUES} values (2 GiB per node)",
                named.join(" × ")
            )
        })
}

/// The command-line knobs that shape an instance.
#[derive(Debug, Clone)]
pub struct Shape {
    pub stages: i64,
    pub scenarios: i64,
    pub reservoirs: i64,
    pub storage_max: f64,
    pub thermal_max: f64,
}

impl Instance {
    /// The default family of instances: 1 to 3 reservoirs, three thermal plants of rising cost,
    /// a seasonal demand and inflows with a wet and a dry half of the horizon.
    pub fn build(shape: &Shape) -> Result<Instance, String> {
        if shape.stages < 1 {
            return Err(format!("stages must be at least 1, got {}", shape.stages));
        }
        if shape.scenarios < 1 {
            return Err(format!(
                "scenarios per stage must be at least 1, got {}",
                shape.scenarios
            ));
        }
        if !(1..=3).contains(&shape.reservoirs) {
            return Err(format!(
                "reservoirs must be 1, 2 or 3, got {}",
                shape.reservoirs
            ));
        }
        let stages = usize::try_from(shape.stages).unwrap_or(usize::MAX);
        let scenarios = usize::try_from(shape.scenarios).unwrap_or(usize::MAX);
        if stages > MAX_STAGES {
            return Err(format!(
                "stages must be at most {MAX_STAGES}, got {}",
                shape.stages
            ));
        }
        table_values(
            "the scenario table",
            &[
                ("stages", stages),
                ("scenarios", scenarios),
                ("reservoirs", shape.reservoirs as usize),
            ],
        )?;
        let reservoirs = (0..shape.reservoirs as usize)
            .map(|i| Reservoir {
                storage_max: shape.storage_max * (1.0 - 0.25 * i as f64),
                storage_initial: 0.5 * shape.storage_max * (1.0 - 0.25 * i as f64),
                turbine_max: 60.0 - 10.0 * i as f64,
                productivity: 1.0 + 0.2 * i as f64,
                inflow_mean: 40.0 - 8.0 * i as f64,
            })
            .collect();
        let thermals = [(1.0, 10.0), (1.0, 25.0), (0.5, 60.0)]
            .iter()
            .map(|&(share, cost)| Thermal {
                capacity: share * shape.thermal_max,
                cost,
            })
            .collect();
        let demand = (0..stages)
            .map(|t| {
                let phase = 2.0 * std::f64::consts::PI * t as f64 / 12.0;
                90.0 + 15.0 * phase.cos() + 10.0 * shape.reservoirs as f64
            })
            .collect();
        let instance = Instance {
            stages,
            scenarios,
            reservoirs,
            thermals,
            deficit_cost: 500.0,
            spill_cost: 0.01,
            demand,
            inflow_cv: 0.4,
        };
        instance.validate()?;
        Ok(instance)
    }

    /// Every number an LP relies on: finite, and capacities and costs not negative.
    pub fn validate(&self) -> Result<(), String> {
        let mut bad = Vec::new();
        let mut need = |what: String, value: f64| {
            if !(value.is_finite() && value >= 0.0) {
                bad.push(format!("{what} is {value}"));
            }
        };
        for (i, r) in self.reservoirs.iter().enumerate() {
            need(format!("reservoir {i} storage capacity"), r.storage_max);
            need(format!("reservoir {i} turbine capacity"), r.turbine_max);
            need(format!("reservoir {i} productivity"), r.productivity);
            if r.storage_max >= 0.0 {
                need(format!("reservoir {i} initial storage"), r.storage_initial);
                need(
                    format!("reservoir {i} room above its initial storage"),
                    r.storage_max - r.storage_initial,
                );
            }
        }
        for (j, g) in self.thermals.iter().enumerate() {
            need(format!("thermal plant {j} capacity"), g.capacity);
            need(format!("thermal plant {j} cost"), g.cost);
        }
        for (t, d) in self.demand.iter().enumerate() {
            need(format!("demand at stage {t}"), *d);
        }
        need("deficit cost".into(), self.deficit_cost);
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "invalid instance: {} (capacities and costs must be finite and not negative)",
                bad.join("; ")
            ))
        }
    }

    pub fn n(&self) -> usize {
        self.reservoirs.len()
    }

    /// Values in the scenario table: `stages × scenarios × reservoirs` (at most
    /// [`MAX_TABLE_VALUES`], which [`Instance::build`] checked).
    pub fn table_len(&self) -> usize {
        self.stages * self.scenarios * self.n()
    }

    /// The inflow of reservoir `i` at stage `t` in scenario `s` from a table.
    pub fn inflow(&self, table: &[f64], t: usize, s: usize, i: usize) -> f64 {
        table[(t * self.scenarios + s) * self.n() + i]
    }

    /// Generates the scenario table from `seed`: independent lognormal-like inflows around a
    /// seasonal mean (wet first half, dry second half).
    pub fn generate_scenarios(&self, seed: u64, table: &mut [f64]) {
        let mut rng = Rng::new(seed ^ 0x5CE7_A210);
        for t in 0..self.stages {
            let season = if 2 * t < self.stages.max(2) { 1.3 } else { 0.7 };
            for s in 0..self.scenarios {
                for (i, r) in self.reservoirs.iter().enumerate() {
                    let z = rng.normal();
                    let value = r.inflow_mean
                        * season
                        * (self.inflow_cv * z - 0.5 * self.inflow_cv.powi(2)).exp();
                    table[(t * self.scenarios + s) * self.n() + i] = value;
                }
            }
        }
    }

    /// Reads a scenario table: one line per (stage, scenario), stage-major, each with one
    /// inflow per reservoir, separated by commas or spaces; `#` starts a comment.
    pub fn parse_scenarios(&self, text: &str, table: &mut [f64]) -> Result<(), String> {
        let rows: Vec<&str> = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .collect();
        let want = self.stages * self.scenarios;
        if rows.len() != want {
            return Err(format!(
                "the scenario file has {} rows; {} stages × {} scenarios need {want}",
                rows.len(),
                self.stages,
                self.scenarios
            ));
        }
        for (k, row) in rows.iter().enumerate() {
            let values: Vec<&str> = row
                .split([',', ' ', '\t'])
                .filter(|v| !v.is_empty())
                .collect();
            if values.len() != self.n() {
                return Err(format!(
                    "row {} of the scenario file has {} values; {} reservoirs need {}",
                    k + 1,
                    values.len(),
                    self.n(),
                    self.n()
                ));
            }
            for (i, v) in values.iter().enumerate() {
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => table[k * self.n() + i] = x,
                    _ => {
                        return Err(format!(
                            "row {} of the scenario file: '{v}' is not an inflow (a number ≥ 0)",
                            k + 1
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// What solving one stage LP gives.
#[derive(Debug, Clone)]
pub struct StageSolution {
    /// Objective, including the future cost θ.
    pub objective: f64,
    /// Cost of this stage alone (objective − θ).
    pub immediate: f64,
    /// Storage at the end of the stage.
    pub storage: Vec<f64>,
    /// ∂objective/∂v_in per reservoir (the water-balance duals).
    pub slope: Vec<f64>,
}

/// The LP of one stage, kept between solves: its cuts are added as rows as they arrive, and
/// the incoming storage and the inflows change the water-balance rows' bounds in place.
///
/// Rows: the `n` water balances `v_i + q_i + s_i = v_in_i + a_i`, the demand, then one row
/// `θ − β·v ≥ α` per cut. Columns: `v`, `q`, `s`, `g`, `d`, `θ`.
pub struct StageLp {
    lp: Lp,
    n: usize,
    theta: usize,
    cuts: usize,
    /// Per number of cuts in the LP: the solves from a basis (given or the last one), then
    /// those from the slack basis.
    times: Vec<[SolveTimes; 2]>,
}

/// Solves of one kind: how many, their seconds and simplex iterations.
#[derive(Debug, Clone, Copy, Default)]
pub struct SolveTimes {
    pub solves: u64,
    pub seconds: f64,
    pub iterations: i64,
}

impl SolveTimes {
    pub fn add(&mut self, other: &SolveTimes) {
        self.solves += other.solves;
        self.seconds += other.seconds;
        self.iterations += other.iterations;
    }
}

impl StageLp {
    /// The LP of stage `t`, without cuts.
    pub fn new(inst: &Instance, t: usize) -> Result<StageLp, String> {
        let (n, m) = (inst.n(), inst.thermals.len());
        let (v0, q0, s0, g0, d, theta) = (0, n, 2 * n, 3 * n, 3 * n + m, 3 * n + m + 1);
        let ncols = theta + 1;
        let mut cost = vec![0.0; ncols];
        let mut bounds = vec![(0.0, f64::INFINITY); ncols];
        for (i, r) in inst.reservoirs.iter().enumerate() {
            bounds[v0 + i].1 = r.storage_max;
            bounds[q0 + i].1 = r.turbine_max;
            cost[s0 + i] = inst.spill_cost;
        }
        for (j, g) in inst.thermals.iter().enumerate() {
            cost[g0 + j] = g.cost;
            bounds[g0 + j].1 = g.capacity;
        }
        cost[d] = inst.deficit_cost;
        cost[theta] = 1.0;
        let balances: Vec<[(usize, f64); 3]> = (0..n)
            .map(|i| [(v0 + i, 1.0), (q0 + i, 1.0), (s0 + i, 1.0)])
            .collect();
        let mut demand: Vec<(usize, f64)> = (0..n)
            .map(|i| (q0 + i, inst.reservoirs[i].productivity))
            .collect();
        demand.extend((0..m).map(|j| (g0 + j, 1.0)));
        demand.push((d, 1.0));
        let mut rows: Vec<Row<'_>> = balances
            .iter()
            .map(|entries| Row {
                lower: 0.0,
                upper: 0.0,
                entries,
            })
            .collect();
        rows.push(Row {
            lower: inst.demand[t],
            upper: inst.demand[t],
            entries: &demand,
        });
        let lp = Lp::new(&cost, &bounds, &rows).map_err(|e| format!("stage {t}: {e}"))?;
        Ok(StageLp {
            lp,
            n,
            theta,
            cuts: 0,
            times: Vec::new(),
        })
    }

    /// Adds the cuts of `cuts` (this stage's, in order, each `[α, β…]`) past those it has.
    pub fn sync(&mut self, cuts: &[f64]) -> Result<(), String> {
        let mut row: Vec<(usize, f64)> = (0..self.n).map(|i| (i, 0.0)).collect();
        row.push((self.theta, 1.0));
        for cut in cuts.chunks_exact(self.n + 1).skip(self.cuts) {
            // θ ≥ α + β·v  ⇔  θ − β·v ≥ α
            for i in 0..self.n {
                row[i].1 = -cut[1 + i];
            }
            self.lp.add_row(&Row {
                lower: cut[0],
                upper: f64::INFINITY,
                entries: &row,
            })?;
            self.cuts += 1;
        }
        Ok(())
    }

    /// Solves for incoming storage `v_in` and inflows `inflow` by the dual simplex from
    /// `start`.
    pub fn solve(
        &mut self,
        inflow: &[f64],
        v_in: &[f64],
        start: Start<'_>,
    ) -> Result<StageSolution, String> {
        for i in 0..self.n {
            let rhs = v_in[i] + inflow[i];
            self.lp.set_row_bounds(i, rhs, rhs)?;
        }
        let clock = std::time::Instant::now();
        self.lp.solve(start)?;
        let seconds = clock.elapsed().as_secs_f64();
        if self.times.len() <= self.cuts {
            self.times.resize(self.cuts + 1, Default::default());
        }
        let kind = &mut self.times[self.cuts][usize::from(matches!(start, Start::Slack))];
        kind.solves += 1;
        kind.seconds += seconds;
        kind.iterations += self.lp.iterations();
        let objective = self.lp.objective();
        let x = self.lp.col_values();
        Ok(StageSolution {
            objective,
            immediate: objective - x[self.theta],
            storage: x[..self.n].iter().map(|v| v.max(0.0)).collect(),
            slope: self.lp.row_duals()[..self.n].to_vec(),
        })
    }

    /// The optimal basis of the last solve, into `basis`.
    pub fn basis(&mut self, basis: &mut Basis) -> Result<(), String> {
        self.lp.basis(basis)
    }

    /// Solves that did not reach an optimum from their start and were retried.
    pub fn retries(&self) -> u64 {
        self.lp.retries()
    }

    /// The solves so far by the number of cuts in the LP: `[from a basis, from the slack
    /// basis]`.
    pub fn times(&self) -> &[[SolveTimes; 2]] {
        &self.times
    }
}

/// The most nodes of a scenario tree [`deterministic_equivalent`] builds.
pub const MAX_TREE_NODES: usize = 200_000;

/// The nodes of the scenario tree (`S + S² + … + S^T`), or `Err` past [`MAX_TREE_NODES`].
pub fn tree_nodes(inst: &Instance) -> Result<usize, String> {
    let (mut nodes, mut level) = (0usize, 1usize);
    for _ in 0..inst.stages {
        level = level.saturating_mul(inst.scenarios);
        nodes = nodes.saturating_add(level);
    }
    if nodes > MAX_TREE_NODES {
        return Err(format!(
            "the scenario tree has {nodes} nodes; the deterministic equivalent is built for at \
             most {MAX_TREE_NODES}"
        ));
    }
    Ok(nodes)
}

/// The optimum of the whole scenario tree as one LP (the deterministic equivalent): every
/// sequence of scenarios, stage by stage from storage `initial`, each with its probability.
/// An answer independent of SDDP, for small trees: `Err` past [`MAX_TREE_NODES`] nodes.
/// Returns the optimum and the tree's node count.
pub fn deterministic_equivalent(
    inst: &Instance,
    table: &[f64],
    initial: &[f64],
) -> Result<(f64, usize), String> {
    let (n, m, scenarios) = (inst.n(), inst.thermals.len(), inst.scenarios);
    let nodes = tree_nodes(inst)?;
    // Per node: v (n), q (n), s (n), g (m), d; nodes level by level, children of node k of a
    // level are k·S … k·S + S − 1 of the next.
    let width = 3 * n + m + 1;
    let mut cost = Vec::with_capacity(nodes * width);
    let mut bounds = Vec::with_capacity(nodes * width);
    let mut rows: Vec<(f64, Vec<(usize, f64)>)> = Vec::new();
    let (mut first, mut count, mut parent_first) = (0usize, scenarios, usize::MAX);
    for t in 0..inst.stages {
        let probability = 1.0 / (count as f64);
        for k in 0..count {
            let base = (first + k) * width;
            let s = k % scenarios;
            for r in &inst.reservoirs {
                cost.push(0.0);
                bounds.push((0.0, r.storage_max));
            }
            for r in &inst.reservoirs {
                cost.push(0.0);
                bounds.push((0.0, r.turbine_max));
            }
            for _ in 0..n {
                cost.push(probability * inst.spill_cost);
                bounds.push((0.0, f64::INFINITY));
            }
            for g in &inst.thermals {
                cost.push(probability * g.cost);
                bounds.push((0.0, g.capacity));
            }
            cost.push(probability * inst.deficit_cost);
            bounds.push((0.0, f64::INFINITY));
            for (i, &v0) in initial.iter().enumerate() {
                // v + q + s − v_parent = inflow (+ the initial storage at the root's children)
                let mut row = vec![
                    (base + i, 1.0),
                    (base + n + i, 1.0),
                    (base + 2 * n + i, 1.0),
                ];
                let mut rhs = inst.inflow(table, t, s, i);
                if t == 0 {
                    rhs += v0;
                } else {
                    row.push(((parent_first + k / scenarios) * width + i, -1.0));
                }
                rows.push((rhs, row));
            }
            let mut demand: Vec<(usize, f64)> = (0..n)
                .map(|i| (base + n + i, inst.reservoirs[i].productivity))
                .collect();
            demand.extend((0..m).map(|j| (base + 3 * n + j, 1.0)));
            demand.push((base + 3 * n + m, 1.0));
            rows.push((inst.demand[t], demand));
        }
        parent_first = first;
        first += count;
        count *= scenarios;
    }
    let rows: Vec<Row<'_>> = rows
        .iter()
        .map(|(rhs, entries)| Row {
            lower: *rhs,
            upper: *rhs,
            entries,
        })
        .collect();
    let mut lp = Lp::new(&cost, &bounds, &rows)?;
    lp.solve(Start::Slack)?;
    Ok((lp.objective(), nodes))
}

/// A small, seeded generator (xorshift64*), so scenarios and sampled paths depend on the seed
/// alone, never on the rank count.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1).
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Instance {
        Instance::build(&Shape {
            stages: 3,
            scenarios: 2,
            reservoirs: 2,
            storage_max: 100.0,
            thermal_max: 60.0,
        })
        .unwrap()
    }

    /// The slope is the derivative of the objective in the incoming storage.
    #[test]
    fn slopes_are_derivatives() {
        let inst = small();
        let inflow = [10.0, 5.0];
        let v = [30.0, 20.0];
        let cut: Vec<f64> = vec![500.0, -4.0, -3.0];
        let mut lp = StageLp::new(&inst, 0).unwrap();
        lp.sync(&cut).unwrap();
        let mut at = |v: &[f64]| lp.solve(&inflow, v, Start::Slack).unwrap();
        let base = at(&v);
        for i in 0..2 {
            let mut w = v;
            w[i] += 1e-3;
            let fd = (at(&w).objective - base.objective) / 1e-3;
            assert!(
                (fd - base.slope[i]).abs() < 1e-3 * (1.0 + fd.abs()),
                "reservoir {i}: {fd} vs {}",
                base.slope[i]
            );
        }
    }

    #[test]
    fn bad_shapes_and_files() {
        let shape = Shape {
            stages: 0,
            scenarios: 2,
            reservoirs: 2,
            storage_max: 100.0,
            thermal_max: 60.0,
        };
        assert!(Instance::build(&shape).unwrap_err().contains("stages"));
        let shape = Shape {
            stages: 2,
            storage_max: -1.0,
            ..shape
        };
        assert!(
            Instance::build(&shape)
                .unwrap_err()
                .contains("storage capacity is -")
        );
        let inst = small();
        let mut table = vec![0.0; inst.table_len()];
        assert!(
            inst.parse_scenarios("1,2\n", &mut table)
                .unwrap_err()
                .contains("has 1 rows")
        );
        let ok = "1,2\n3,4\n5 6\n7,8 # c\n9,10\n11,12\n";
        inst.parse_scenarios(ok, &mut table).unwrap();
        assert_eq!(inst.inflow(&table, 2, 1, 1), 12.0);
        assert!(
            inst.parse_scenarios(&ok.replace("5 6", "5"), &mut table)
                .unwrap_err()
                .contains("row 3")
        );
        assert!(
            inst.parse_scenarios(&ok.replace("5 6", "5 -6"), &mut table)
                .is_err()
        );
    }
}
