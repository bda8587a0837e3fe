/*
 * The fixed text of the JSON-RPC envelope as mcpfast's encoder writes it, in the member
 * order it always uses.
 */
#ifndef MCPFAST_ENVELOPE_TEXT_H
#define MCPFAST_ENVELOPE_TEXT_H

/* The fixed parts of the JSON-RPC envelope, in the member order mcpfast always uses. */
static const char mf_env_id[] = "{\"jsonrpc\":\"2.0\",\"id\":";
static const char mf_env_method_first[] = "{\"jsonrpc\":\"2.0\",\"method\":";
static const char mf_env_method[] = ",\"method\":";
static const char mf_env_params[] = ",\"params\":";
static const char mf_env_result[] = ",\"result\":";
static const char mf_env_error_code[] = ",\"error\":{\"code\":";
static const char mf_env_message[] = ",\"message\":";
static const char mf_env_data[] = ",\"data\":";
#define MF_ENV_ID_LEN (sizeof(mf_env_id) - 1)
#define MF_ENV_METHOD_FIRST_LEN (sizeof(mf_env_method_first) - 1)
#define MF_ENV_METHOD_LEN (sizeof(mf_env_method) - 1)
#define MF_ENV_PARAMS_LEN (sizeof(mf_env_params) - 1)
#define MF_ENV_RESULT_LEN (sizeof(mf_env_result) - 1)
#define MF_ENV_ERROR_CODE_LEN (sizeof(mf_env_error_code) - 1)
#define MF_ENV_MESSAGE_LEN (sizeof(mf_env_message) - 1)
#define MF_ENV_DATA_LEN (sizeof(mf_env_data) - 1)

#endif /* MCPFAST_ENVELOPE_TEXT_H */
