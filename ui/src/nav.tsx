// The views, in the sidebar's order: the one place a view is registered. Each entry gives
// its id (what `useNavigate` takes and "hsmc.view" remembers), its sidebar label, its
// Alt+key shortcut and the component shown for it. The first is shown on a first start.
import type { ComponentType } from "react";
import { AuditView } from "./views/Audit";
import { ConnectionsView } from "./views/Connections";
import { HssView } from "./views/Hss";
import { KeysView } from "./views/Keys";
import { PartitionViewPage } from "./views/Partition";
import { ProbesView } from "./views/Probes";
import { SettingsView } from "./views/Settings";
import { SignView } from "./views/Sign";
import { StatsView } from "./views/Stats";
import { VerifyView } from "./views/Verify";

export interface NavEntry {
  view: string;
  label: string;
  /// With Alt: Alt+1 … Alt+9, Alt+0.
  key: string;
  Component: ComponentType;
}

export const NAV = [
  { view: "connections", label: "Connections", key: "1", Component: ConnectionsView },
  { view: "partition", label: "Partition", key: "2", Component: PartitionViewPage },
  { view: "keys", label: "Keys", key: "3", Component: KeysView },
  { view: "sign", label: "Sign", key: "4", Component: SignView },
  { view: "verify", label: "Verify", key: "5", Component: VerifyView },
  { view: "hss", label: "HSS keys", key: "6", Component: HssView },
  { view: "stats", label: "Statistics", key: "7", Component: StatsView },
  { view: "probes", label: "Probes", key: "8", Component: ProbesView },
  { view: "audit", label: "Audit trail", key: "9", Component: AuditView },
  { view: "settings", label: "Settings", key: "0", Component: SettingsView },
] as const satisfies readonly NavEntry[];

export type View = (typeof NAV)[number]["view"];

export const VIEWS: readonly View[] = NAV.map((n) => n.view);
