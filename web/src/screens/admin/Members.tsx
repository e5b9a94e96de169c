import { PageHeader } from "../../components/ui";

export default function Members() {
  return <PageHeader title="Members" />;
}
