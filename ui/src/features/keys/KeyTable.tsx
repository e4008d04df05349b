// The keys' table: a row per object (tens of thousands scroll as one list), a box to pick
// several, the arrows to move between them.
import type { KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import type { ApiError, ObjectSummary } from "../../bindings";
import { Badge, EmptyState } from "../../components";
import { VirtualTable, type Column } from "../../components/VirtualTable";
import i18n, { formatter } from "../../i18n";

const ROW = 34;

export function classLabel(c: string) {
  return c.toLowerCase().replace(/_/g, " ");
}

/// A row's flags: token or session, sensitive, non-extractable or extractable only under trusted
/// keys, trusted (a wrapping key the SO marked), the PIN wanted per signature, HSS signatures
/// left.
function flags(k: ObjectSummary): string {
  const t = i18n.t;
  return [
    k.token ? t("keys.flag_token") : t("keys.flag_session"),
    k.sensitive ? t("keys.flag_sensitive") : null,
    k.extractable === false ? t("keys.flag_non_extractable") : null,
    k.extractable === true && k.wrap_with_trusted === true ? t("keys.flag_trusted_wrap_only") : null,
    k.trusted === true ? t("keys.flag_trusted") : null,
    k.always_authenticate === true ? t("keys.flag_pin_per_signature") : null,
    k.hss_keys_remaining !== null ? t("keys.flag_left", { n: formatter().number(k.hss_keys_remaining) }) : null,
  ]
    .filter(Boolean)
    .join(" · ");
}

export function KeyTable({
  keys,
  shown,
  error,
  loggedIn,
  active,
  onActivate,
  checked,
  onToggle,
  onKeyDown,
}: {
  /// All the keys read (null while reading), and those the filters let through.
  keys: ObjectSummary[] | null;
  shown: ObjectSummary[];
  error: ApiError | null;
  loggedIn: boolean;
  active: number | null;
  onActivate: (handle: number) => void;
  checked: ReadonlySet<number>;
  onToggle: (handle: number) => void;
  onKeyDown: (e: KeyboardEvent) => void;
}) {
  const { t } = useTranslation();
  const columns: Column<ObjectSummary>[] = [
    {
      header: <span className="sr-only">{t("keys.selected")}</span>,
      cell: (k) => (
        <input
          type="checkbox"
          checked={checked.has(k.handle)}
          onChange={() => onToggle(k.handle)}
          onClick={(e) => e.stopPropagation()}
          aria-label={t("keys.select", { label: k.label })}
          tabIndex={-1}
        />
      ),
    },
    {
      header: t("generate.label"),
      className: "ellipsis",
      title: (k) => k.label,
      cell: (k) => (
        <>
          {k.label || <span className="muted">{t("connections.no_label")}</span>}
          {k.duplicate_label && (
            <Badge tone="warn" title={t("keys.duplicate_label")}>
              {t("keys.duplicate")}
            </Badge>
          )}
        </>
      ),
    },
    { header: t("keys.class"), cell: (k) => classLabel(k.class) },
    { header: t("audit.col_algorithm"), cell: (k) => k.algorithm || k.key_type },
    { header: "ID", className: "mono ellipsis", title: (k) => k.id_hex, cell: (k) => k.id_hex },
    { header: t("partition.col_flags"), className: "flags", cell: flags },
  ];
  const placeholder =
    keys === null && !error ? (
      <p className="muted pad">{t("keys.reading_objects")}</p>
    ) : shown.length === 0 ? (
      <EmptyState title={keys && keys.length > 0 ? t("keys.no_match") : t("keys.no_objects")}>
        {keys && keys.length > 0 ? t("keys.clear_filters") : loggedIn ? t("keys.generate_first") : t("keys.log_in_private")}
      </EmptyState>
    ) : null;
  return (
    <VirtualTable
      kind="key"
      label={t("nav.keys")}
      testId="key-table"
      rowTestId="key-row"
      rows={shown}
      columns={columns}
      rowKey={(k) => k.handle}
      rowHeight={ROW}
      overscan={12}
      activeKey={active}
      onActivate={(k) => onActivate(k.handle)}
      onKeyDown={onKeyDown}
      onRowClick={(k) => onActivate(k.handle)}
      rowData={(k) => ({ "data-label": k.label })}
      placeholder={placeholder}
    />
  );
}
