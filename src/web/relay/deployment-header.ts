/** The response header naming the deployment (its catalog id, never its key) that answered. */
export const DEPLOYMENT_HEADER = 'x-gateway-deployment';
