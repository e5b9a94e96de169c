import { PageHeader } from "../../components/ui";

export default function ChangeRequests() {
  return <PageHeader title="ChangeRequests" />;
}
