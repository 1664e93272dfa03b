//! A linear program kept in HiGHS between solves: rows added, row bounds changed in place,
//! re-solved by the dual simplex from a given basis.
//!
//! The only `unsafe` of the flagship: a thin, checked layer over HiGHS's C API (`highs-sys`).
//! A solve starts from a clean simplex state and a given basis ([`Start::Slack`],
//! [`Start::Basis`]), or goes on from the last one ([`Start::Continue`]). HiGHS's simplex state
//! (its random vectors, edge weights, factorization) depends on every solve since the last
//! clean start, so a result is reproducible exactly when that sequence is: the solver starts
//! clean wherever the sequence could differ between rank counts.

use highs_sys::{
    Highs_changeRowBounds, Highs_clearSolver, Highs_create, Highs_destroy, Highs_getBasis,
    Highs_getModelStatus, Highs_getObjectiveValue, Highs_getSimplexIterationCount,
    Highs_getSolution, Highs_passLp, Highs_run, Highs_setBasis, Highs_setBoolOptionValue,
    Highs_setDoubleOptionValue, Highs_setIntOptionValue, Highs_setLogicalBasis,
    Highs_setStringOptionValue, HighsInt, MATRIX_FORMAT_ROW_WISE, MODEL_STATUS_OPTIMAL,
    STATUS_ERROR,
};
use std::ffi::{CStr, c_void};
use std::ptr::NonNull;

/// HiGHS's status of a basic variable or row.
const BASIC: HighsInt = 1;
/// HiGHS's `simplex_strategy` values: the serial dual simplex, the primal simplex.
const DUAL: HighsInt = 1;
const PRIMAL: HighsInt = 4;

/// A simplex basis, compact: the status of every column and of the rows that are not basic
/// (at most one per column). Its size does not grow with the rows, so every pass can keep one
/// per stage however many cuts the stages hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Basis {
    cols: Vec<HighsInt>,
    /// `(row, status)` of each nonbasic row, in row order.
    nonbasic_rows: Vec<(usize, HighsInt)>,
}

/// Where a solve starts.
#[derive(Debug, Clone, Copy)]
pub enum Start<'a> {
    /// From the slack basis and a clean simplex state.
    Slack,
    /// From this basis (rows added since it was taken start basic) and a clean simplex state.
    /// A basis of no columns is the slack basis.
    Basis(&'a Basis),
    /// From where the last solve of this LP ended: its basis, factorization and simplex state
    /// (the fastest; as reproducible as the sequence of solves since the last clean start).
    Continue,
}

/// One row: bounds and `(column, coefficient)` entries.
pub struct Row<'a> {
    pub lower: f64,
    pub upper: f64,
    pub entries: &'a [(usize, f64)],
}

/// An LP `min c·x, lower ≤ A x ≤ upper, col_lower ≤ x ≤ col_upper`, owned by one HiGHS
/// instance, with a copy of its data: rows added since the last solve reach HiGHS as one new
/// LP, so HiGHS scales every version of the LP from its whole data, however its rows came
/// (a resumed run adds every cut at once; HiGHS scales rows added to a solved LP by the
/// factors it chose before, which would round them differently).
pub struct Lp {
    highs: NonNull<c_void>,
    cost: Vec<f64>,
    col_lower: Vec<f64>,
    col_upper: Vec<f64>,
    row_lower: Vec<f64>,
    row_upper: Vec<f64>,
    /// The rows, compressed: row r's entries are `index[start[r]..start[r + 1]]`.
    start: Vec<HighsInt>,
    index: Vec<HighsInt>,
    value: Vec<f64>,
    /// Rows were added since HiGHS last had the LP.
    changed: bool,
    retries: u64,
    /// Scratch for solutions and row statuses, sized to the LP: no allocation per solve.
    col_value: Vec<f64>,
    col_dual: Vec<f64>,
    row_value: Vec<f64>,
    row_dual: Vec<f64>,
    row_status: Vec<HighsInt>,
}

/// `rc` of a HiGHS call, as `Err` naming `what` when it failed.
fn check(rc: HighsInt, what: &str) -> Result<(), String> {
    if rc == STATUS_ERROR {
        Err(format!("HiGHS {what} failed"))
    } else {
        Ok(())
    }
}

fn index(i: usize, what: &str) -> Result<HighsInt, String> {
    HighsInt::try_from(i).map_err(|_| format!("{what}: {i} is too large for HiGHS"))
}

impl Lp {
    /// An LP with these columns (cost, bounds) and rows, quiet and single-threaded, solved by
    /// the dual simplex without presolve (presolve would discard the warm start).
    pub fn new(cost: &[f64], col_bounds: &[(f64, f64)], rows: &[Row<'_>]) -> Result<Lp, String> {
        if col_bounds.len() != cost.len() {
            return Err("an LP needs one pair of bounds per column".into());
        }
        index(cost.len(), "columns")?;
        // SAFETY: Highs_create takes no arguments and returns a new instance or null.
        let highs = NonNull::new(unsafe { Highs_create() })
            .ok_or_else(|| "HiGHS could not create an instance".to_string())?;
        let (col_lower, col_upper) = col_bounds.iter().copied().unzip();
        let mut lp = Lp {
            highs,
            cost: cost.to_vec(),
            col_lower,
            col_upper,
            row_lower: Vec::new(),
            row_upper: Vec::new(),
            start: vec![0],
            index: Vec::new(),
            value: Vec::new(),
            changed: true,
            retries: 0,
            col_value: vec![0.0; cost.len()],
            col_dual: vec![0.0; cost.len()],
            row_value: Vec::new(),
            row_dual: Vec::new(),
            row_status: Vec::new(),
        };
        let options: [(&CStr, Setting); 6] = [
            (c"output_flag", Setting::Bool(false)),
            (c"threads", Setting::Int(1)),
            (c"presolve", Setting::Str(c"off")),
            (c"solver", Setting::Str(c"simplex")),
            (c"simplex_strategy", Setting::Int(DUAL)),
            (c"random_seed", Setting::Int(0)),
        ];
        for (name, value) in options {
            lp.set(name, value)?;
        }
        for row in rows {
            lp.add_row(row)?;
        }
        Ok(lp)
    }

    fn set(&mut self, name: &CStr, value: Setting) -> Result<(), String> {
        let p = self.highs.as_ptr();
        // SAFETY: the instance is live and `name` (and a string value) are NUL-terminated.
        let rc = unsafe {
            match value {
                Setting::Bool(b) => Highs_setBoolOptionValue(p, name.as_ptr(), HighsInt::from(b)),
                Setting::Int(i) => Highs_setIntOptionValue(p, name.as_ptr(), i),
                Setting::Double(x) => Highs_setDoubleOptionValue(p, name.as_ptr(), x),
                Setting::Str(s) => Highs_setStringOptionValue(p, name.as_ptr(), s.as_ptr()),
            }
        };
        check(rc, &format!("option {}", name.to_string_lossy()))
    }

    /// Appends a row; HiGHS gets it at the next solve.
    pub fn add_row(&mut self, row: &Row<'_>) -> Result<(), String> {
        if let Some(&(c, _)) = row.entries.iter().find(|&&(c, _)| c >= self.cost.len()) {
            return Err(format!("a row names column {c} of {}", self.cost.len()));
        }
        index(self.row_lower.len() + 1, "rows")?;
        index(self.index.len() + row.entries.len(), "entries")?;
        for &(c, v) in row.entries {
            // In range: below the column count, which fits (checked in `new`).
            self.index.push(c as HighsInt);
            self.value.push(v);
        }
        self.start.push(self.index.len() as HighsInt);
        self.row_lower.push(row.lower);
        self.row_upper.push(row.upper);
        self.row_value.push(0.0);
        self.row_dual.push(0.0);
        self.changed = true;
        Ok(())
    }

    /// Gives HiGHS the whole LP, if rows were added since it last had it.
    fn pass(&mut self) -> Result<(), String> {
        if !self.changed {
            return Ok(());
        }
        let rows = self.row_lower.len();
        // SAFETY: the instance is live; cost and column bounds hold num_col entries, row
        // bounds num_row, `start` num_row + 1 offsets into `index`/`value` (num_nz entries,
        // each a column below num_col); every count fits HighsInt (checked as rows were
        // added). HiGHS copies the arrays.
        check(
            unsafe {
                Highs_passLp(
                    self.highs.as_ptr(),
                    self.cost.len() as HighsInt,
                    rows as HighsInt,
                    self.index.len() as HighsInt,
                    MATRIX_FORMAT_ROW_WISE,
                    1, // minimise
                    0.0,
                    self.cost.as_ptr(),
                    self.col_lower.as_ptr(),
                    self.col_upper.as_ptr(),
                    self.row_lower.as_ptr(),
                    self.row_upper.as_ptr(),
                    self.start.as_ptr(),
                    self.index.as_ptr(),
                    self.value.as_ptr(),
                )
            },
            "passLp",
        )?;
        self.changed = false;
        Ok(())
    }

    /// Sets the bounds of row `row` (an equality when `lower == upper`).
    pub fn set_row_bounds(&mut self, row: usize, lower: f64, upper: f64) -> Result<(), String> {
        if row >= self.row_lower.len() {
            return Err(format!("row {row} of {}", self.row_lower.len()));
        }
        self.row_lower[row] = lower;
        self.row_upper[row] = upper;
        if self.changed {
            return Ok(()); // HiGHS gets the new bounds with the whole LP
        }
        // SAFETY: the instance is live and holds the LP, of which `row` is a row.
        check(
            unsafe { Highs_changeRowBounds(self.highs.as_ptr(), row as HighsInt, lower, upper) },
            "changeRowBounds",
        )
    }

    /// Solves the LP as it now is, from `start`. HiGHS's dual simplex perturbs the costs and
    /// can fail to clean up afterwards on the near-parallel cuts SDDP makes (model status
    /// "unknown"); such a solve is retried from the slack basis and a clean state without the
    /// perturbation, then by the primal simplex: the same steps at every rank count. `Err`
    /// unless one reaches an optimum.
    pub fn solve(&mut self, start: Start<'_>) -> Result<(), String> {
        if self.changed && matches!(start, Start::Continue) {
            return Err("an LP whose rows changed cannot go on from its last solve".into());
        }
        let first = self.solve_once(start);
        if first.is_ok() {
            return first;
        }
        self.retries += 1;
        for (name, value, default) in [
            (
                c"dual_simplex_cost_perturbation_multiplier",
                Setting::Double(0.0),
                Setting::Double(1.0),
            ),
            (
                c"simplex_strategy",
                Setting::Int(PRIMAL),
                Setting::Int(DUAL),
            ),
        ] {
            self.set(name, value)?;
            let retried = self.solve_once(Start::Slack);
            self.set(name, default)?;
            if retried.is_ok() {
                return retried;
            }
        }
        first
    }

    /// Solves retried so far.
    pub fn retries(&self) -> u64 {
        self.retries
    }

    fn solve_once(&mut self, start: Start<'_>) -> Result<(), String> {
        self.pass()?;
        let p = self.highs.as_ptr();
        let rows = self.row_lower.len();
        match start {
            Start::Continue => {}
            Start::Slack => {
                // SAFETY: the instance is live.
                check(unsafe { Highs_clearSolver(p) }, "clearSolver")?;
                // SAFETY: the instance is live.
                check(unsafe { Highs_setLogicalBasis(p) }, "setLogicalBasis")?;
            }
            Start::Basis(basis) if basis.cols.is_empty() => {
                return self.solve_once(Start::Slack);
            }
            Start::Basis(basis) => {
                if basis.cols.len() != self.cost.len()
                    || basis.nonbasic_rows.last().is_some_and(|&(r, _)| r >= rows)
                {
                    return Err("a basis taken from another LP".into());
                }
                self.row_status.clear();
                self.row_status.resize(rows, BASIC);
                for &(row, status) in &basis.nonbasic_rows {
                    self.row_status[row] = status;
                }
                // SAFETY: the instance is live.
                check(unsafe { Highs_clearSolver(p) }, "clearSolver")?;
                // SAFETY: the instance is live; the arrays hold one status per column and per
                // row, each a status HiGHS gave (or BASIC for rows added since).
                check(
                    unsafe { Highs_setBasis(p, basis.cols.as_ptr(), self.row_status.as_ptr()) },
                    "setBasis",
                )?;
            }
        }
        // SAFETY: the instance is live.
        check(unsafe { Highs_run(p) }, "run")?;
        // SAFETY: the instance is live.
        let status = unsafe { Highs_getModelStatus(p) };
        if status != MODEL_STATUS_OPTIMAL {
            return Err(format!("HiGHS stopped with model status {status}"));
        }
        // SAFETY: the instance is live; each array holds one entry per column or row.
        check(
            unsafe {
                Highs_getSolution(
                    p,
                    self.col_value.as_mut_ptr(),
                    self.col_dual.as_mut_ptr(),
                    self.row_value.as_mut_ptr(),
                    self.row_dual.as_mut_ptr(),
                )
            },
            "getSolution",
        )
    }

    /// The optimal basis of the last solve, into `basis`.
    pub fn basis(&mut self, basis: &mut Basis) -> Result<(), String> {
        basis.cols.resize(self.cost.len(), 0);
        self.row_status.resize(self.row_lower.len(), 0);
        // SAFETY: the instance is live; the arrays hold one entry per column and per row.
        check(
            unsafe {
                Highs_getBasis(
                    self.highs.as_ptr(),
                    basis.cols.as_mut_ptr(),
                    self.row_status.as_mut_ptr(),
                )
            },
            "getBasis",
        )?;
        basis.nonbasic_rows.clear();
        basis.nonbasic_rows.extend(
            (self.row_status.iter().copied().enumerate()).filter(|&(_, status)| status != BASIC),
        );
        Ok(())
    }

    /// The optimal objective of the last solve.
    pub fn objective(&self) -> f64 {
        // SAFETY: the instance is live.
        unsafe { Highs_getObjectiveValue(self.highs.as_ptr()) }
    }

    /// Simplex iterations of the last solve.
    pub fn iterations(&self) -> i64 {
        // SAFETY: the instance is live.
        i64::from(unsafe { Highs_getSimplexIterationCount(self.highs.as_ptr()) })
    }

    /// Column values of the last solve.
    pub fn col_values(&self) -> &[f64] {
        &self.col_value
    }

    /// Row duals of the last solve: ∂objective/∂(bound of the row) for an active row.
    pub fn row_duals(&self) -> &[f64] {
        &self.row_dual
    }
}

impl Drop for Lp {
    fn drop(&mut self) {
        // SAFETY: the instance was made by Highs_create and is destroyed once, here.
        unsafe { Highs_destroy(self.highs.as_ptr()) }
    }
}

#[derive(Debug, Clone, Copy)]
enum Setting {
    Bool(bool),
    Int(HighsInt),
    Double(f64),
    Str(&'static CStr),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// min x + 2y, x + y ≥ b, x ≤ 3: a row bound changed in place, a row added, a basis kept
    /// and reused, the same optimum from every start.
    #[test]
    fn warm_starts_reach_the_cold_optimum() {
        let entries = [(0, 1.0), (1, 1.0)];
        let demand = Row {
            lower: 2.0,
            upper: f64::INFINITY,
            entries: &entries,
        };
        let mut lp = Lp::new(&[1.0, 2.0], &[(0.0, 3.0), (0.0, 10.0)], &[demand]).unwrap();
        assert!(
            lp.solve(Start::Continue).is_err(),
            "nothing to go on from before the first solve"
        );
        lp.solve(Start::Slack).unwrap();
        assert_eq!((lp.objective(), lp.col_values()), (2.0, &[2.0, 0.0][..]));
        let mut basis = Basis::default();
        lp.basis(&mut basis).unwrap();
        lp.set_row_bounds(0, 5.0, f64::INFINITY).unwrap();
        lp.solve(Start::Continue).unwrap();
        // x = 3 at its bound, y = 2: the row's dual is y's cost.
        assert_eq!((lp.objective(), lp.row_duals()), (7.0, &[2.0][..]));
        let only_y = [(1, 1.0)];
        lp.add_row(&Row {
            lower: 3.0,
            upper: f64::INFINITY,
            entries: &only_y,
        })
        .unwrap();
        assert!(lp.solve(Start::Continue).is_err(), "rows changed");
        for start in [Start::Basis(&basis), Start::Slack] {
            lp.solve(start).unwrap();
            assert_eq!(lp.objective(), 8.0, "{start:?}");
        }
        assert!(lp.set_row_bounds(2, 0.0, 1.0).is_err());
        let far = [(2, 1.0)];
        let bad = Row {
            lower: 0.0,
            upper: 1.0,
            entries: &far,
        };
        assert!(lp.add_row(&bad).is_err(), "a column the LP has not");
    }
}
