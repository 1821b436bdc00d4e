import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

export interface OperatorPoolProps {
  readonly userPoolName: string;
  /** Keep the pool (and refuse to delete it) when the stack goes away: operators live here. */
  readonly retain: boolean;
}

/** Tokens the admin portal holds; an operator signs in again after this. */
export const OPERATOR_SESSION = Duration.hours(1);

/**
 * The operators of the admin portal: a Cognito user pool that only an administrator adds people
 * to, the app client the sign-in function calls InitiateAuth (USER_PASSWORD_AUTH) on, and the
 * HTTP API JWT authorizer that verifies the ID token it hands out.
 */
export class OperatorPool extends Construct {
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;
  /** Attach to every route whose `auth` is `operator`; its Authorizer resource appears with the first route. */
  readonly authorizer: HttpUserPoolAuthorizer;

  constructor(scope: Construct, id: string, props: OperatorPoolProps) {
    super(scope, id);

    this.userPool = new cognito.UserPool(this, 'UserPool', {
      userPoolName: props.userPoolName,
      selfSignUpEnabled: false,
      signInAliases: { username: true },
      signInCaseSensitive: false,
      // Account recovery sends the code to the operator's email, so every operator has one.
      standardAttributes: { email: { required: true, mutable: true } },
      autoVerify: { email: true },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      passwordPolicy: {
        minLength: 12,
        requireLowercase: true,
        requireUppercase: true,
        requireDigits: true,
        requireSymbols: true,
        tempPasswordValidity: Duration.days(3),
        passwordHistorySize: 5,
      },
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      featurePlan: cognito.FeaturePlan.ESSENTIALS,
      deletionProtection: props.retain,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    this.client = this.userPool.addClient('AdminPortalClient', {
      userPoolClientName: 'admin-portal',
      // The sign-in function sends username and password with no secret hash.
      authFlows: { userPassword: true },
      generateSecret: false,
      // No hosted UI or OAuth redirects: the portal signs in through the API only.
      disableOAuth: true,
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      idTokenValidity: OPERATOR_SESSION,
      accessTokenValidity: OPERATOR_SESSION,
      // The sign-in function never hands the refresh token on; Cognito's shortest lifetime.
      refreshTokenValidity: OPERATOR_SESSION,
      enableTokenRevocation: true,
    });

    // Issuer https://cognito-idp.<region>.amazonaws.com/<pool id>, audience the client id (the ID token's `aud`).
    this.authorizer = new HttpUserPoolAuthorizer('OperatorAuthorizer', this.userPool, {
      userPoolClients: [this.client],
      authorizerName: 'operators',
    });

    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG2',
      reason:
        'MFA is optional (TOTP only, no SMS) rather than required: operators who enrol TOTP are asked for ' +
        'the code at sign-in (SOFTWARE_TOKEN_MFA), but the portal cannot enrol a new operator (MFA_SETUP), ' +
        'so required MFA would refuse every new operator. Operators are created by an administrator only, ' +
        'passwords need 12 characters of every class, and the sign-in route is throttled to 5 requests per second.',
    });
    Validations.of(this.userPool).acknowledge({
      id: 'AwsSolutions-COG8',
      reason:
        'Threat protection needs the Plus feature plan, billed per active user, and its adaptive ' +
        "authentication scores a sign-in by the caller's IP address and device. Operators sign in server-side " +
        'through the AdminSignIn function, which does not forward UserContextData, so every sign-in would ' +
        'look like it came from Lambda. Essentials keeps password history and the strong password policy.',
    });
  }

  /** Configuration of the function that calls InitiateAuth (lambdas/config.ts); the call is public, so no IAM. */
  get signInEnvironment(): Record<string, string> {
    return { COGNITO_CLIENT_ID: this.client.userPoolClientId, COGNITO_REGION: Stack.of(this).region };
  }
}
