import { gql } from "@apollo/client";

export const JOB_LIST = gql`
  query JobList {
    jobs {
      name
      schedule
      owner {
        team
        email
      }
      lastRun {
        id
        status
        startedAt
      }
    }
  }
`;

export const JOB_RUNS = gql`
  query JobRuns($name: String!, $limit: Int = 20) {
    job(name: $name) {
      runs(limit: $limit) {
        id
        ds
        status
        rows
        elapsedSeconds
        triggeredBy {
          email
        }
      }
    }
  }
`;
