import { fromDraft } from "./Segments";

const conditions = [{ attribute: "plan", operator: "not_in" as const, values: ["free"] }];

test("a segment rule's conditions are saved as loaded; a conditions-only rule writes no top-level condition", () => {
  expect(fromDraft({ attribute: "", operator: "equals", values: "", base: { conditions } })).toEqual({ conditions });
  expect(fromDraft({ attribute: " country ", operator: "equals", values: "DE, AT", base: { conditions } })).toEqual({
    conditions,
    attribute: "country",
    operator: "equals",
    values: ["DE", "AT"],
  });
});
