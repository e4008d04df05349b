//! Small statistics the benchmarks share.

/// The median of `v`: the middle value, the upper of the two middle ones for an even count.
/// Panics on an empty `v` or on values that do not compare (NaN).
pub fn median<T: PartialOrd + Copy>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).expect("comparable values"));
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn middle_value_or_upper_middle() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4, 1, 3, 2]), 3);
        assert_eq!(median(vec![7]), 7);
    }
}
