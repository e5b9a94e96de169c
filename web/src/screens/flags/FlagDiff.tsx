import { PageHeader } from "../../components/ui";

export default function FlagDiff() {
  return <PageHeader title="FlagDiff" />;
}
