// The Keys view's filters: a search (label, ID, parameter set), the class, the algorithm,
// a capability; and the keys they let through.
import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import type { ObjectSummary } from "../../bindings";
import { classLabel } from "./KeyTable";

const CAPS = ["sign", "verify", "encrypt", "decrypt", "wrap", "unwrap", "derive", "encapsulate", "decapsulate"] as const;
type Cap = (typeof CAPS)[number];

export interface KeyFilter {
  q: string;
  cls: string;
  alg: string;
  cap: Cap | "";
}

export function filterKeys(keys: ObjectSummary[], { q, cls, alg, cap }: KeyFilter): ObjectSummary[] {
  const s = q.trim().toLowerCase();
  return keys.filter(
    (k) =>
      (!cls || k.class === cls) &&
      (!alg || k.algorithm === alg) &&
      (!cap || k.capabilities[cap]) &&
      (!s || k.label.toLowerCase().includes(s) || k.id_hex.includes(s) || (k.parameter_set ?? "").toLowerCase().includes(s)),
  );
}

export function KeyFilters({
  keys,
  filter,
  onChange,
}: {
  keys: ObjectSummary[] | null;
  filter: KeyFilter;
  onChange: (f: KeyFilter) => void;
}) {
  const { t } = useTranslation();
  const set = (change: Partial<KeyFilter>) => onChange({ ...filter, ...change });
  const classes = useMemo(() => Array.from(new Set((keys ?? []).map((k) => k.class))).sort(), [keys]);
  const algorithms = useMemo(() => Array.from(new Set((keys ?? []).map((k) => k.algorithm).filter(Boolean))).sort(), [keys]);
  return (
    <div className="filters">
      <input
        type="search"
        placeholder={t("keys.search_placeholder")}
        value={filter.q}
        onChange={(e) => set({ q: e.target.value })}
        aria-label={t("keys.search_label")}
        data-testid="key-search"
      />
      <select value={filter.cls} onChange={(e) => set({ cls: e.target.value })} aria-label={t("keys.class")}>
        <option value="">{t("keys.all_classes")}</option>
        {classes.map((c) => (
          <option key={c} value={c}>
            {classLabel(c)}
          </option>
        ))}
      </select>
      <select value={filter.alg} onChange={(e) => set({ alg: e.target.value })} aria-label={t("audit.col_algorithm")}>
        <option value="">{t("keys.all_algorithms")}</option>
        {algorithms.map((a) => (
          <option key={a} value={a}>
            {a}
          </option>
        ))}
      </select>
      <select value={filter.cap} onChange={(e) => set({ cap: e.target.value as Cap | "" })} aria-label={t("keys.capability")}>
        <option value="">{t("keys.any_capability")}</option>
        {CAPS.map((c) => (
          <option key={c} value={c}>
            {t(`keys.can_${c}`)}
          </option>
        ))}
      </select>
    </div>
  );
}
