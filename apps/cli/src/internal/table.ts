/** A plain text table: columns padded to their widest cell, numbers right-aligned. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: readonly number[] = [],
): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        rightAligned.includes(column)
          ? cell.padStart(widths[column] ?? 0)
          : cell.padEnd(widths[column] ?? 0),
      )
      .join('  ')
      .trimEnd();
  return [render(headers), ...rows.map(render)].join('\n');
}
