import { gql } from "@apollo/client";

export const OWNERS = gql`
  query Owners {
    owners {
      team
      slackChannel
      oncall {
        name
        email
      }
    }
  }
`;

export interface Owner {
  team: string;
  slackChannel: string;
  oncall: { name: string; email: string };
}
