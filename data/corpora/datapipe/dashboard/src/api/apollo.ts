import { ApolloClient, HttpLink, InMemoryCache } from "@apollo/client";

const API_URL = import.meta.env.VITE_DATAPIPE_GRAPHQL_URL ?? "/graphql";

export const apolloClient = new ApolloClient({
  link: new HttpLink({ uri: API_URL, credentials: "include" }),
  cache: new InMemoryCache({
    typePolicies: {
      Job: { keyFields: ["name"] },
      JobRun: { keyFields: ["id"] },
    },
  }),
});
