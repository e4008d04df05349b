// Parts of the key generation dialog: an HSS key's levels (an LMS and an LM-OTS type
// each), and what the backend says of the spec chosen (mechanism, sizes, capacity).
import { useTranslation } from "react-i18next";
import type { KeySpecInfo, LmotsType, LmsType } from "../../bindings";
import { useFormat } from "../../i18n";
import { LMOTS, LMS, lmotsBytes, lmsBytes, withLms } from "./presets";

export function HssLevels({
  levels,
  onChange,
  busy,
}: {
  levels: [LmsType, LmotsType][];
  onChange: (levels: [LmsType, LmotsType][]) => void;
  busy: boolean;
}) {
  const { t } = useTranslation();
  return (
    <section className="hss-levels">
      <h3>{t("generate.hss_levels")}</h3>
      {levels.map((lv, i) => (
        <div className="inline-form" key={i}>
          <span>{t("generate.level", { n: i + 1 })}</span>
          <select
            value={lv[0]}
            onChange={(e) => onChange(levels.map((x, j) => (j === i ? withLms(x, e.target.value as LmsType) : x)))}
            aria-label={t("generate.level_lms", { n: i + 1 })}
            disabled={busy}
          >
            {LMS.map((x) => (
              <option key={x}>{x}</option>
            ))}
          </select>
          <select
            value={lv[1]}
            onChange={(e) => onChange(levels.map((x, j) => (j === i ? [x[0], e.target.value as LmotsType] : x)))}
            aria-label={t("generate.level_lmots", { n: i + 1 })}
            disabled={busy}
          >
            {LMOTS.filter((x) => lmotsBytes(x) === lmsBytes(lv[0])).map((x) => (
              <option key={x}>{x}</option>
            ))}
          </select>
          <button
            onClick={() => onChange(levels.filter((_, j) => j !== i))}
            disabled={busy || levels.length === 1}
            aria-label={t("generate.remove_level", { n: i + 1 })}
          >
            {t("connections.remove")}
          </button>
        </div>
      ))}
      <button onClick={() => onChange([...levels, ["LMS_SHA256_M32_H5", "LMOTS_SHA256_N32_W8"]])} disabled={busy || levels.length >= 8}>
        {t("generate.add_level")}
      </button>
    </section>
  );
}

export function SpecInfo({ info }: { info: KeySpecInfo }) {
  const { t } = useTranslation();
  const fmt = useFormat();
  return (
    <dl className="info-grid spec-info" data-testid="spec-info">
      <div>
        <dt>{t("generate.mechanism")}</dt>
        <dd>
          <code>{info.mechanism}</code>
        </dd>
      </div>
      {info.public_key_len !== null && (
        <div>
          <dt>{t("generate.public_key")}</dt>
          <dd>{t("generate.public_key_len", { bytes: info.public_key_len })}</dd>
        </div>
      )}
      {info.signature_len !== null && (
        <div>
          <dt>{t("verify.signature")}</dt>
          <dd>{t("generate.bytes", { bytes: fmt.number(info.signature_len) })}</dd>
        </div>
      )}
      {info.signature_capacity !== null && (
        <div>
          <dt>{t("generate.signatures")}</dt>
          <dd data-testid="hss-capacity">{t("generate.capacity", { n: fmt.number(BigInt(info.signature_capacity)) })}</dd>
        </div>
      )}
    </dl>
  );
}
