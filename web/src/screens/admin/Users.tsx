import { PageHeader } from "../../components/ui";

export default function Users() {
  return <PageHeader title="Users" />;
}
