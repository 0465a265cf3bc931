import { GraphQLClient, gql } from "graphql-request";

const client = new GraphQLClient("/graphql-legacy");

const EXPORT_SUBSCRIBERS = gql`
  query ExportSubscribers($exportName: String!) {
    export(name: $exportName) {
      subscribers {
        email
      }
    }
  }
`;

export function exportSubscribers(exportName: string) {
  return client.request(EXPORT_SUBSCRIBERS, { exportName });
}
