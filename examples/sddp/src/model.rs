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

use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettings, DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT,
    SolverStatus, SupportedConeT, ZeroConeT,
};

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
    /// ∂objective/∂v_in per reservoir (minus the water-balance duals).
    pub slope: Vec<f64>,
}

/// Builds and solves the LP of stage `t`, scenario inflows `inflow`, incoming storage `v_in`,
/// future cost bounded by `cuts` (each `[α, β…]`).
pub fn solve_stage<'a>(
    inst: &Instance,
    t: usize,
    inflow: &[f64],
    v_in: &[f64],
    cuts: impl Iterator<Item = &'a [f64]>,
) -> Result<StageSolution, String> {
    let (n, m) = (inst.n(), inst.thermals.len());
    // Variables: v (n), q (n), s (n), g (m), d, θ.
    let (v0, q0, s0, g0, d, theta) = (0, n, 2 * n, 3 * n, 3 * n + m, 3 * n + m + 1);
    let nvar = theta + 1;
    let mut cost = vec![0.0; nvar];
    for i in 0..n {
        cost[s0 + i] = inst.spill_cost;
    }
    for (j, g) in inst.thermals.iter().enumerate() {
        cost[g0 + j] = g.cost;
    }
    cost[d] = inst.deficit_cost;
    cost[theta] = 1.0;

    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut rhs = Vec::new();
    // Equalities first (zero cone).
    for i in 0..n {
        rows.push(vec![(v0 + i, 1.0), (q0 + i, 1.0), (s0 + i, 1.0)]);
        rhs.push(v_in[i] + inflow[i]);
    }
    let mut demand: Vec<(usize, f64)> = (0..n)
        .map(|i| (q0 + i, inst.reservoirs[i].productivity))
        .collect();
    demand.extend((0..m).map(|j| (g0 + j, 1.0)));
    demand.push((d, 1.0));
    rows.push(demand);
    rhs.push(inst.demand[t]);
    let equalities = rows.len();
    // Inequalities A x ≤ b (nonnegative cone): bounds, then cuts.
    for k in 0..nvar {
        rows.push(vec![(k, -1.0)]);
        rhs.push(0.0);
    }
    for (i, r) in inst.reservoirs.iter().enumerate() {
        rows.push(vec![(v0 + i, 1.0)]);
        rhs.push(r.storage_max);
        rows.push(vec![(q0 + i, 1.0)]);
        rhs.push(r.turbine_max);
    }
    for (j, g) in inst.thermals.iter().enumerate() {
        rows.push(vec![(g0 + j, 1.0)]);
        rhs.push(g.capacity);
    }
    for cut in cuts {
        // θ ≥ α + β·v  ⇔  β·v − θ ≤ −α
        let mut row: Vec<(usize, f64)> = (0..n).map(|i| (v0 + i, cut[1 + i])).collect();
        row.push((theta, -1.0));
        rows.push(row);
        rhs.push(-cut[0]);
    }
    let inequalities = rows.len() - equalities;

    let a = csc(&rows, nvar);
    let p = CscMatrix::<f64>::zeros((nvar, nvar));
    let cones: [SupportedConeT<f64>; 2] = [ZeroConeT(equalities), NonnegativeConeT(inequalities)];
    let mut solver = DefaultSolver::new(&p, &cost, &a, &rhs, &cones, settings())
        .map_err(|e| format!("stage {t}: the LP could not be set up: {e:?}"))?;
    solver.solve();
    let sol = &solver.solution;
    if !matches!(
        sol.status,
        SolverStatus::Solved | SolverStatus::AlmostSolved
    ) {
        return Err(format!(
            "stage {t}: the LP solver stopped with {:?}",
            sol.status
        ));
    }
    let objective = sol.obj_val;
    Ok(StageSolution {
        objective,
        immediate: objective - sol.x[theta],
        storage: sol.x[v0..v0 + n]
            .iter()
            .map(|v| v.clamp(0.0, f64::MAX))
            .collect(),
        // Clarabel's dual: ∂objective/∂b = −z for rows A x + s = b.
        slope: (0..n).map(|i| -sol.z[i]).collect(),
    })
}

fn settings() -> DefaultSettings<f64> {
    DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-9)
        .tol_gap_rel(1e-9)
        .tol_feas(1e-9)
        .build()
        .expect("valid solver settings")
}

/// A sparse matrix in compressed columns from rows of `(column, value)`.
fn csc(rows: &[Vec<(usize, f64)>], ncols: usize) -> CscMatrix<f64> {
    let mut columns: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ncols];
    for (r, row) in rows.iter().enumerate() {
        for &(c, v) in row {
            columns[c].push((r, v));
        }
    }
    let mut colptr = vec![0];
    let (mut rowval, mut nzval) = (Vec::new(), Vec::new());
    for col in &columns {
        for &(r, v) in col {
            rowval.push(r);
            nzval.push(v);
        }
        colptr.push(rowval.len());
    }
    CscMatrix::new(rows.len(), ncols, colptr, rowval, nzval)
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
        let at =
            |v: &[f64]| solve_stage(&inst, 0, &inflow, v, std::iter::once(cut.as_slice())).unwrap();
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
