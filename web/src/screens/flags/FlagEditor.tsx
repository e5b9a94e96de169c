import { PageHeader } from "../../components/ui";

export default function FlagEditor() {
  return <PageHeader title="FlagEditor" />;
}
