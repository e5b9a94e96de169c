import { render, screen, within } from "@testing-library/react";
import { ConversionChart, niceMax, TimelineChart, wilsonInterval } from "./charts";

test("Wilson interval for 10 of 100 matches the hand computation", () => {
  // p = 0.1, z² = 3.8416, z²/n = 0.038416, denominator 1.038416
  // centre = (0.1 + 0.019208) / 1.038416 = 0.1147975
  // half   = 1.96 * sqrt(0.0009 + 0.00009604) / 1.038416 = 0.0595685
  const ci = wilsonInterval(10, 100)!;
  expect(ci.lower).toBeCloseTo(0.055229, 5);
  expect(ci.upper).toBeCloseTo(0.174366, 5);
});

test("Wilson interval stays inside [0,1] at the extremes and is null without data", () => {
  // 0 of 20: lower 0, upper = z²/n / (1 + z²/n) = 0.19208 / 1.19208 = 0.161130
  const zero = wilsonInterval(0, 20)!;
  expect(zero.lower).toBe(0);
  expect(zero.upper).toBeCloseTo(0.16113, 5);
  const all = wilsonInterval(20, 20)!;
  expect(all.upper).toBe(1);
  expect(all.lower).toBeCloseTo(1 - 0.16113, 5);
  expect(wilsonInterval(0, 0)).toBeNull();
});

test("niceMax rounds up to a round axis maximum", () => {
  expect(niceMax(0.173)).toBe(0.2);
  expect(niceMax(0.22)).toBe(0.25);
  expect(niceMax(37)).toBe(50);
  expect(niceMax(100)).toBe(100);
  expect(niceMax(0)).toBe(1);
});

test("conversion chart describes every bar and lists the same numbers in its data table", () => {
  render(
    <ConversionChart
      title="Conversion by variant"
      bars={[
        { label: "control", converted: 10, exposed: 100, isControl: true },
        { label: "treatment", converted: 0, exposed: 0 },
      ]}
    />,
  );
  const img = screen.getByRole("img", { name: /Conversion by variant/ });
  expect(img).toHaveAccessibleName(expect.stringContaining("control (control): 10.0% of 100 users, 95% interval 5.5% to 17.4%"));
  const table = screen.getByRole("table");
  const row = within(table).getByRole("row", { name: /control \(control\)/ });
  expect(row).toHaveTextContent("10 / 100");
  expect(row).toHaveTextContent("5.5% – 17.4%");
  expect(within(table).getByRole("row", { name: /treatment/ })).toHaveTextContent("0 / 0——");
});

test("timeline chart tables every day per series", () => {
  render(
    <TimelineChart
      title="Daily exposure"
      days={["2026-11-20", "2026-11-21"]}
      series={[
        { name: "true", values: [3, 4] },
        { name: "false", values: [0, 2] },
      ]}
    />,
  );
  expect(screen.getByRole("img", { name: /Daily exposure/ })).toHaveAccessibleName(
    expect.stringContaining("true: 7 in total; false: 2 in total"),
  );
  const row = screen.getByRole("row", { name: /2026-11-21/ });
  expect(within(row).getAllByRole("cell").map((c) => c.textContent)).toEqual(["4", "2"]);
});
