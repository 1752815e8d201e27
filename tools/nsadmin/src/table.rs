//! Plain-text tables and JSON output: what every subcommand prints.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

use crate::escape::printable;

/// Columns with left-aligned cells, each as wide as its widest cell plus two spaces
/// (the layout of mqadmin's `ClusterListSubCommand`). The cells are kept in one string, so a
/// table of a large answer costs about the size of its text.
#[derive(Debug, Default)]
pub struct Table {
    /// Every cell's text, escaped, the headers first, one after another.
    text: String,
    /// Where each cell ends in `text`.
    cell_ends: Vec<usize>,
    /// Where each line (the headers, then each row) ends in `cell_ends`.
    line_ends: Vec<usize>,
    /// Each column's width in characters: its widest cell so far.
    widths: Vec<usize>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(headers: &[&str]) -> Table {
        let mut table = Table::default();
        table.push_line(headers.iter());
        table
    }

    /// Appends a row (control characters escaped: [`printable`]); missing cells print empty,
    /// extra cells are kept.
    pub fn row(&mut self, cells: Vec<String>) {
        self.push_line(cells.iter().map(|c| printable(c)));
    }

    fn push_line<S: AsRef<str>>(&mut self, cells: impl Iterator<Item = S>) {
        for (i, cell) in cells.enumerate() {
            let cell = cell.as_ref();
            self.text.push_str(cell);
            self.cell_ends.push(self.text.len());
            let width = cell.chars().count();
            match self.widths.get_mut(i) {
                Some(widest) => *widest = (*widest).max(width),
                None => self.widths.push(width),
            }
        }
        self.line_ends.push(self.cell_ends.len());
    }

    /// The table as text, one line per row, with no trailing spaces.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = self.lines(|line| {
            out.push_str(line);
            out.push('\n');
            Ok(())
        });
        out
    }

    /// Writes the table as [`Table::render`] has it, a line at a time.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<()> {
        self.lines(|line| writeln!(out, "{line}"))
    }

    /// Each line of the table, padded and trimmed, to `emit`.
    fn lines(&self, mut emit: impl FnMut(&str) -> io::Result<()>) -> io::Result<()> {
        let (mut line, mut first_cell, mut from) = (String::new(), 0, 0);
        for &line_end in &self.line_ends {
            line.clear();
            let cells = self.cell_ends.get(first_cell..line_end).unwrap_or_default();
            for (i, width) in self.widths.iter().enumerate() {
                let cell = match cells.get(i) {
                    Some(&to) => self.text.get(std::mem::replace(&mut from, to)..to).unwrap_or_default(),
                    None => "",
                };
                let _ = write!(line, "{cell:<width$}  ");
            }
            emit(line.trim_end())?;
            first_cell = line_end;
        }
        Ok(())
    }
}

/// Prints `value` as one line of JSON, written out as it is serialized: a large answer is not
/// copied into a string first.
pub fn print_json(value: &impl Serialize) {
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let written = serde_json::to_writer(&mut out, value).map_err(std::io::Error::from).and_then(|()| {
        out.write_all(b"\n")?;
        out.flush()
    });
    // Only maps with non-string keys fail to serialize, and no output type has one; a closed
    // stdout (`| head`) ends the output.
    if let Err(e) = written {
        eprintln!("cannot write json: {e}");
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
