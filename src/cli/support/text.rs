//! Text for people: sizes, and tables whose columns line up.

pub use crate::store::human_size;

/// A text table: every column as wide as its widest cell (ids of any
/// length, long labels), the columns `right` marks right-aligned (numbers),
/// the last column unpadded.
pub fn table<const N: usize>(
    header: &[String; N],
    rows: &[[String; N]],
    right: [bool; N],
) -> Vec<String> {
    let mut width = [0usize; N];
    for r in std::iter::once(header).chain(rows) {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    std::iter::once(header)
        .chain(rows)
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| match (i, right[i]) {
                    (i, _) if i + 1 == N => c.clone(),
                    (_, true) => format!("{c:>w$}", w = width[i]),
                    (_, false) => format!("{c:<w$}", w = width[i]),
                })
                .collect();
            cells.join("  ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_aligns_every_column_for_long_ids_and_labels() {
        let header = ["ID", "WHEN", "FILES", "SIZE", "HELD", "WHY", "TOOLKIT"].map(String::from);
        let row = |id: &str, held: &str| {
            [
                id,
                "2026-01-01T00:00:00Z",
                "3",
                "12 B",
                held,
                "before use x",
                "/tk",
            ]
            .map(String::from)
        };
        let lines = super::table(
            &header,
            &[
                row("9", "7.6.5 (not from cudnnm) (first)"),
                row("10", "no cuDNN"),
                row("12345", "9.1.0.70"),
            ],
            [true, false, true, true, false, false, false],
        );
        // Every line's WHEN and TOOLKIT columns start at the same place.
        let at = |l: &str, what: &str| l.find(what).unwrap();
        assert_eq!(at(&lines[0], "WHEN"), 7);
        for l in &lines[1..] {
            assert_eq!(at(l, "2026"), 7, "{lines:#?}");
            assert_eq!(at(l, "/tk"), at(&lines[0], "TOOLKIT"), "{lines:#?}");
        }
        assert!(lines[2].starts_with("   10  "), "{lines:#?}");
        assert!(lines[3].starts_with("12345  "), "{lines:#?}");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(super::human_size(12), "12 B");
        assert_eq!(super::human_size(1536), "1.5 KiB");
        assert_eq!(super::human_size(1_268_000_000), "1.2 GiB");
    }
}
