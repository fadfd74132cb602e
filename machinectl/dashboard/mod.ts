/**
 * `machinectl dashboard`: a live screen of one node. A pure renderer
 * ({@link renderDashboard}) draws a state that one reducer ({@link reduce})
 * builds from the node's streams; a connection loop ({@link followNode})
 * follows the node through reboots; a thin terminal layer paints it.
 *
 * @example
 * ```ts
 * import { initialState, reduce, renderDashboard } from "./machinectl/dashboard/mod.ts";
 * let s = initialState("10.0.0.5:50000", Date.now());
 * s = reduce(s, { type: "hostname", hostname: "node-1" });
 * console.log(renderDashboard(s, { width: 100, height: 30 }).join("\n"));
 * ```
 * @module
 */
export { dashboardCommand } from "./dashboard_command.ts";
export { renderDashboard, type ScreenSize } from "./render.ts";
export { sparkline } from "./sparkline.ts";
export { backoffMs, followNode, type FollowOptions } from "./sources.ts";
export {
  type DashboardAction,
  type DashboardState,
  initialState,
  reduce,
  type Sample,
} from "./state.ts";
