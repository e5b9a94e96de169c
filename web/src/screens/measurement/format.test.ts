import {
  flagVariantValues,
  formatCount,
  formatPercent,
  formatPValue,
  formatUplift,
  formatZ,
  keyProblem,
  maxId,
  mergeNewest,
  pivotTimeline,
  renderValue,
} from "./format";
import type { Schemas } from "../../api/client";
import { keyFromName } from "../../lib/targeting";

test("rates, uplift, p-values and z-scores are formatted, with a dash for null", () => {
  expect(formatPercent(0.1234)).toBe("12.3%");
  expect(formatPercent(1)).toBe("100.0%");
  expect(formatPercent(null)).toBe("—");
  expect(formatUplift(0.25)).toBe("+25.0%");
  expect(formatUplift(-0.0404)).toBe("\u22124.0%");
  expect(formatUplift(null)).toBe("—");
  expect(formatPValue(0.045678)).toBe("0.0457");
  expect(formatPValue(0.5)).toBe("0.500");
  expect(formatPValue(0.00001)).toBe("< 0.0001");
  expect(formatPValue(null)).toBe("—");
  expect(formatZ(1.95996)).toBe("1.96");
  expect(formatZ(null)).toBe("—");
  expect(formatCount(12345)).toBe("12,345");
});

test("values render like stored impressions", () => {
  expect(renderValue(true)).toBe("true");
  expect(renderValue(30.5)).toBe("30.5");
  expect(renderValue("blue")).toBe("blue");
  expect(renderValue({ a: [1, 2] })).toBe('{"a":[1,2]}');
  const flag = { flag_type: "string", variants: [{ weight: 50, value: "a" }, { weight: 50, value: "b" }], default_value: "a" } as Schemas["Flag"];
  expect(flagVariantValues(flag)).toEqual(["a", "b"]);
  expect(flagVariantValues({ flag_type: "boolean", variants: [], default_value: false } as unknown as Schemas["Flag"])).toEqual(["true", "false"]);
});

test("new log rows go first, duplicates are dropped and the list is capped", () => {
  const current = [{ id: 5 }, { id: 4 }, { id: 3 }];
  expect(mergeNewest(current, [{ id: 6 }, { id: 7 }, { id: 5 }], 4).map((r) => r.id)).toEqual([7, 6, 5, 4]);
  expect(mergeNewest(current, [])).toBe(current);
  expect(maxId(current)).toBe(5);
  expect(maxId([])).toBeUndefined();
});

test("the exposure timeline becomes zero-filled series over the window", () => {
  const pivot = pivotTimeline(
    [
      { day: "2026-11-20", value: "true", count: 3 },
      { day: "2026-11-22", value: "true", count: 1 },
      { day: "2026-11-22", value: "false", count: 9 },
    ],
    3,
    new Date("2026-11-22T15:00:00Z"),
  );
  expect(pivot.days).toEqual(["2026-11-20", "2026-11-21", "2026-11-22"]);
  expect(pivot.series).toEqual([
    { name: "false", values: [0, 0, 9], total: 9 },
    { name: "true", values: [3, 0, 1], total: 4 },
  ]);
  // an explicit order wins over totals; an empty timeline still spans the window
  expect(pivotTimeline([{ day: "2026-11-22", value: "b", count: 1 }, { day: "2026-11-22", value: "a", count: 5 }], 1, new Date("2026-11-22T01:00:00Z"), ["b", "a"]).series.map((s) => s.name)).toEqual(["b", "a"]);
  expect(pivotTimeline([], 7, new Date("2026-11-22T01:00:00Z")).days).toHaveLength(7);
});

test("keys are suggested from names and checked like the server does", () => {
  expect(keyFromName("  Checkout v2 — new button!")).toBe("checkout-v2-new-button");
  expect(keyProblem("Key", "")).toBe("Key is required.");
  expect(keyProblem("Key", "has space")).toMatch(/only letters/);
  expect(keyProblem("Key", "ok_key-1")).toBeUndefined();
});
