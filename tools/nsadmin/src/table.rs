//! Plain-text tables and JSON output: what every subcommand prints.

use std::fmt::Write;

use serde::Serialize;

use crate::escape::printable;

/// Columns with left-aligned cells, each as wide as its widest cell plus two spaces
/// (the layout of mqadmin's `ClusterListSubCommand`).
#[derive(Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(headers: &[&str]) -> Table {
        Table { headers: headers.iter().map(|h| (*h).to_owned()).collect(), rows: Vec::new() }
    }

    /// Appends a row (control characters escaped: [`printable`]); missing cells print empty,
    /// extra cells are kept.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.into_iter().map(|c| printable(&c).into_owned()).collect());
    }

    /// The table as text, one line per row, with no trailing spaces.
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).chain([self.headers.len()]).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for line in std::iter::once(&self.headers).chain(&self.rows) {
            for (i, cell) in line.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for line in std::iter::once(&self.headers).chain(&self.rows) {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = line.get(i).map(String::as_str).unwrap_or("");
                let _ = write!(text, "{cell:<width$}  ");
            }
            out.push_str(text.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Prints `value` as one line of JSON.
pub fn print_json(value: &impl Serialize) {
    match serde_json::to_string(value) {
        Ok(line) => println!("{line}"),
        // Only maps with non-string keys fail to serialize, and no output type has one.
        Err(e) => eprintln!("cannot write json: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped_for_the_terminal() {
        let mut table = Table::new(&["#Topic"]);
        table.row(vec!["a\rb".into()]);
        assert_eq!(table.render(), "#Topic\na\\u{d}b\n");
    }

    #[test]
    fn columns_align_to_the_widest_cell() {
        let mut table = Table::new(&["#Cluster", "#Broker"]);
        table.row(vec!["DefaultCluster".into(), "b".into()]);
        table.row(vec!["C".into(), "broker-long".into(), "extra".into()]);
        assert_eq!(table.render(), "#Cluster        #Broker\nDefaultCluster  b\nC               broker-long  extra\n");
    }
}
