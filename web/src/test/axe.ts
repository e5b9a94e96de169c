// accessibilityProblems runs axe-core over a rendered screen with the rules
// the end-to-end test uses (WCAG 2.1 A and AA) and returns its serious and
// critical violations, one line each. jsdom neither lays out nor draws, so
// colour contrast and the label-in-name rule (which measures glyphs on a
// canvas) are left to the end-to-end test in a real browser.
import axe from "axe-core";

export async function accessibilityProblems(root: Element = document.body): Promise<string[]> {
  const result = await axe.run(root, {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    rules: { "color-contrast": { enabled: false }, "label-content-name-mismatch": { enabled: false } },
  });
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
}
