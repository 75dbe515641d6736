//! This module defines [`Rows`]: a batch of fixed-width rows of term ids in one flat vector.

use crate::store::TermId;

use super::ROW_UNBOUND;

/// Rows of `width` ids each, stored back to back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rows {
    width: usize,
    data: Vec<TermId>,
}

impl Rows {
    /// No rows. Rows are at least one id wide (a plan with no variables still counts its rows).
    pub fn new(width: usize) -> Self {
        assert!(width > 0, "rows are at least one id wide");
        Self {
            width,
            data: Vec::new(),
        }
    }

    /// No rows, room for `rows`.
    pub fn with_capacity(width: usize, rows: usize) -> Self {
        assert!(width > 0, "rows are at least one id wide");
        Self {
            width,
            data: Vec::with_capacity(width * rows),
        }
    }

    /// One row with every variable unbound.
    pub fn unit(width: usize) -> Self {
        Self {
            width,
            data: vec![ROW_UNBOUND; width],
        }
    }

    /// The row width.
    pub fn width(&self) -> usize {
        self.width
    }

    /// How many rows.
    pub fn len(&self) -> usize {
        self.data.len() / self.width
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[TermId] {
        &self.data[i * self.width..(i + 1) * self.width]
    }

    /// Row `i`, mutable.
    #[inline]
    pub fn row_mut(&mut self, i: usize) -> &mut [TermId] {
        &mut self.data[i * self.width..(i + 1) * self.width]
    }

    /// Every row.
    pub fn iter(&self) -> impl Iterator<Item = &[TermId]> {
        self.data.chunks_exact(self.width)
    }

    /// Appends a copy of `row`.
    #[inline]
    pub fn push(&mut self, row: &[TermId]) {
        debug_assert_eq!(row.len(), self.width);
        self.data.extend_from_slice(row);
    }

    /// Appends a copy of `row` and returns it for editing.
    #[inline]
    pub fn push_copy(&mut self, row: &[TermId]) -> &mut [TermId] {
        let start = self.data.len();
        self.data.extend_from_slice(row);
        &mut self.data[start..]
    }

    /// Drops the last row.
    #[inline]
    pub fn pop(&mut self) {
        self.data.truncate(self.data.len() - self.width);
    }

    /// Appends every row of `other`.
    pub fn extend_from(&mut self, other: &Rows) {
        self.data.extend_from_slice(&other.data);
    }

    /// Removes every row, keeping the allocation.
    pub fn clear(&mut self) {
        self.data.clear();
    }

    /// Keeps the rows for which `keep(index, row)` holds.
    pub fn retain(&mut self, mut keep: impl FnMut(usize, &[TermId]) -> bool) {
        let w = self.width;
        let n = self.len();
        let mut out = 0;
        for i in 0..n {
            if keep(i, &self.data[i * w..(i + 1) * w]) {
                if out != i {
                    self.data.copy_within(i * w..(i + 1) * w, out * w);
                }
                out += 1;
            }
        }
        self.data.truncate(out * w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_fixed_width_slices_of_one_vector() {
        let mut r = Rows::new(2);
        r.push(&[TermId(1), TermId(2)]);
        r.push_copy(&[TermId(3), ROW_UNBOUND])[1] = TermId(4);
        assert_eq!(r.len(), 2);
        assert_eq!(r.row(1), &[TermId(3), TermId(4)]);
        r.retain(|i, _| i == 1);
        assert_eq!(r.len(), 1);
        assert_eq!(r.row(0), &[TermId(3), TermId(4)]);
    }
}
