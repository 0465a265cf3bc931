// Legacy report pages, still on graphql-request until they move to Apollo.
import { GraphQLClient, gql } from "graphql-request";

const client = new GraphQLClient("/graphql-legacy");

const RECIPIENTS = gql`
  query ReportRecipients($report: String!) {
    report(name: $report) {
      recipients {
        name
        email
      }
      createdBy {
        email
      }
    }
  }
`;

export async function reportRecipients(report: string) {
  return client.request(RECIPIENTS, { report });
}
