// The fixed answers of the two baselines: a ~120-byte token and an introspection answer.
export const token = JSON.stringify({
  access_token: "bench0123456789abcdefghijklmnopqrstuvwxyzAB",
  token_type: "Bearer",
  expires_in: 3600,
  scope: "api:read"
})
export const introspection = JSON.stringify({
  active: true,
  scope: "api:read",
  client_id: "bench-client",
  token_type: "Bearer",
  exp: 4102444800,
  iat: 1700000000
})
