// The one table for long lists (the keys, the audit trail): only the rows in view are in
// the page, so 10,000 keys or 100,000 records scroll like a short list. An ARIA grid: a
// header row, then a row group; messages in place of the rows, and anything after them,
// are a row's one cell (a grid holds only rows).
import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useImperativeHandle, useRef, type KeyboardEvent, type ReactNode, type Ref } from "react";

export interface Column<T> {
  /// The header cell's content.
  header: ReactNode;
  cell: (row: T) => ReactNode;
  className?: string;
  /// The cell's tooltip (a value the column may cut short).
  title?: (row: T) => string | undefined;
}

/// What a view may ask of the table from outside: show a row (a bad record, a found key).
export interface VirtualTableHandle {
  scrollToIndex: (index: number, align?: "auto" | "center") => void;
}

type RowKey = string | number;

export interface VirtualTableProps<T> {
  /// The CSS names' prefix: `KIND-table`, `KIND-head`, `KIND-row`, `KIND-scroll`.
  kind: string;
  /// The grid's accessible name.
  label: string;
  testId: string;
  /// Each row's test id.
  rowTestId: string;
  rows: readonly T[];
  columns: readonly Column<T>[];
  rowKey: (row: T) => RowKey;
  /// Each row's height in pixels (the rows are placed by it; the CSS must agree).
  rowHeight: number;
  overscan?: number;
  /// The row shown as active (highlighted, aria-selected).
  activeKey?: RowKey | null;
  /// Keyboard navigation: given, the grid takes the focus and the arrows, Home and End move
  /// the active row. Without it the row group takes the focus, so that the rows scroll from
  /// the keyboard.
  onActivate?: (row: T) => void;
  /// Keys the view handles first (Space, Delete…): a handler that calls preventDefault has
  /// taken the key.
  onKeyDown?: (e: KeyboardEvent) => void;
  onRowClick?: (row: T) => void;
  /// A row's extra class names.
  rowClass?: (row: T) => string;
  /// A row's data-* attributes (what tests and the e2e suite find rows by).
  rowData?: (row: T) => Record<`data-${string}`, string | number | undefined>;
  /// Shown instead of the rows (reading, nothing found), as one cell across the grid.
  placeholder?: ReactNode;
  /// After the rows, as one cell across the grid (a button for older records).
  footer?: ReactNode;
  /// Told the index of the last row rendered, whenever it changes (to load more near the end).
  onLastRendered?: (index: number) => void;
  handle?: Ref<VirtualTableHandle>;
}

export function VirtualTable<T>(props: VirtualTableProps<T>) {
  const { kind, rows, columns, rowKey, rowHeight, activeKey, onActivate, onKeyDown, onLastRendered } = props;
  const scrollRef = useRef<HTMLDivElement>(null);
  // eslint-disable-next-line react-hooks/incompatible-library -- TanStack Virtual's API cannot be memoized by the React compiler; this table re-renders on scroll by design.
  const virt = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan: props.overscan ?? 10,
  });
  useImperativeHandle(props.handle, () => ({ scrollToIndex: (i, align = "auto") => virt.scrollToIndex(i, { align }) }), [virt]);
  const items = virt.getVirtualItems();
  const last = items.at(-1)?.index ?? 0;
  useEffect(() => {
    onLastRendered?.(last);
  }, [last, onLastRendered]);

  const navigate = (e: KeyboardEvent) => {
    onKeyDown?.(e);
    if (e.defaultPrevented || !onActivate || rows.length === 0) return;
    const at = rows.findIndex((r) => rowKey(r) === activeKey);
    let i: number;
    if (e.key === "ArrowDown") i = Math.min(rows.length - 1, at + 1);
    else if (e.key === "ArrowUp") i = Math.max(0, at - 1);
    else if (e.key === "Home") i = 0;
    else if (e.key === "End") i = rows.length - 1;
    else return;
    e.preventDefault();
    const row = rows[i];
    if (row !== undefined) {
      onActivate(row);
      virt.scrollToIndex(i);
    }
  };
  const span = columns.length;
  const keyboard = !!onActivate;

  return (
    <div
      className={`${kind}-table`}
      role="grid"
      aria-label={props.label}
      aria-rowcount={rows.length + 1}
      tabIndex={keyboard ? 0 : undefined}
      onKeyDown={keyboard || onKeyDown ? navigate : undefined}
      data-testid={props.testId}
    >
      <div className={`${kind}-row ${kind}-head`} role="row" aria-rowindex={1}>
        {columns.map((c, i) => (
          <span key={i} role="columnheader">
            {c.header}
          </span>
        ))}
      </div>
      {props.placeholder ? (
        <div role="row">
          <div role="gridcell" aria-colspan={span}>
            {props.placeholder}
          </div>
        </div>
      ) : (
        <div className={`${kind}-scroll`} role="rowgroup" ref={scrollRef} tabIndex={keyboard ? undefined : 0}>
          <div style={{ height: virt.getTotalSize(), position: "relative" }}>
            {items.map((v) => {
              const row = rows[v.index]!;
              const key = rowKey(row);
              const active = activeKey !== undefined && key === activeKey;
              const extra = props.rowClass?.(row);
              return (
                <div
                  key={key}
                  role="row"
                  aria-rowindex={v.index + 2}
                  aria-selected={activeKey !== undefined ? active : undefined}
                  className={`${kind}-row${extra ? ` ${extra}` : ""}${active ? " active" : ""}`}
                  style={{ position: "absolute", top: 0, left: 0, right: 0, height: rowHeight, transform: `translateY(${v.start}px)` }}
                  onClick={props.onRowClick && (() => props.onRowClick?.(row))}
                  data-testid={props.rowTestId}
                  {...props.rowData?.(row)}
                >
                  {columns.map((c, i) => (
                    <span key={i} role="gridcell" className={c.className} title={c.title?.(row)}>
                      {c.cell(row)}
                    </span>
                  ))}
                </div>
              );
            })}
          </div>
        </div>
      )}
      {props.footer && (
        <div role="row">
          <div role="gridcell" aria-colspan={span} className="virtual-footer">
            {props.footer}
          </div>
        </div>
      )}
    </div>
  );
}
