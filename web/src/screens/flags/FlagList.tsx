import { PageHeader } from "../../components/ui";

export default function FlagList() {
  return <PageHeader title="FlagList" />;
}
