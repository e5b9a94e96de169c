import { PageHeader } from "../../components/ui";

export default function Tokens() {
  return <PageHeader title="Tokens" />;
}
