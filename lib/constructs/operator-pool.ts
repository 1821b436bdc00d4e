import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { HttpUserPoolAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { OPERATOR_ROLES, type OperatorRole } from '../operator-roles';

export interface OperatorPoolProps {
  /** A fixed name; none by default (generated, like the table's: docs/operations.md). */
  readonly userPoolName?: string;
  /** Keep the pool (and refuse to delete it) when the stack goes away: operators live here. */
  readonly retain: boolean;
  /** The admin portal's address: Cognito sends operators back there after signing in and out. */
  readonly portalUrl: string;
  /** Prefix of the sign-in pages' domain, https://<prefix>.auth.<region>.amazoncognito.com. */
  readonly domainPrefix: string;
}

/** Tokens the admin portal holds; an operator signs in again after this. */
export const OPERATOR_SESSION = Duration.hours(1);

/** Roles by group precedence: an operator in several groups gets the strongest (lib/operator-roles.ts). */
const GROUP_PRECEDENCE: Readonly<Record<OperatorRole, number>> = { admin: 0, operator: 1, viewer: 2 };

/**
 * The operators of the admin portal (ADR 0019): a Cognito user pool that only an administrator adds
 * people to, with TOTP required and threat protection enforced; one group per role; Cognito's own
 * sign-in pages, which the portal reaches with an authorization code and PKCE; and the HTTP API JWT
 * authorizer that verifies the ID token it gets.
 */
export class OperatorPool extends Construct {
  readonly userPool: cognito.UserPool;
  readonly client: cognito.UserPoolClient;
  readonly domain: cognito.UserPoolDomain;
  /** The group of each role; an operator's groups arrive in the ID token's `cognito:groups`. */
  readonly groups: ReadonlyMap<OperatorRole, cognito.UserPoolGroup>;
  /** Attach to every route whose `auth` is `operator`; its Authorizer resource appears with the first route. */
  readonly authorizer: HttpUserPoolAuthorizer;

  constructor(scope: Construct, id: string, props: OperatorPoolProps) {
    super(scope, id);

    this.userPool = new cognito.UserPool(this, 'UserPool', {
      ...(props.userPoolName ? { userPoolName: props.userPoolName } : {}),
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
      // PCI DSS 8.4.2: every access to the cardholder data environment's administration needs MFA.
      // Cognito's sign-in pages enrol the authenticator app at the first sign-in (QR code).
      mfa: cognito.Mfa.REQUIRED,
      mfaSecondFactor: { otp: true, sms: false },
      // Threat protection (Plus): compromised credentials and risky sign-ins are blocked per user,
      // scored by the operator's own IP address and device, which the sign-in pages see.
      featurePlan: cognito.FeaturePlan.PLUS,
      standardThreatProtectionMode: cognito.StandardThreatProtectionMode.FULL_FUNCTION,
      deletionProtection: props.retain,
      removalPolicy: props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });

    new cognito.CfnUserPoolRiskConfigurationAttachment(this, 'ThreatProtection', {
      userPoolId: this.userPool.userPoolId,
      clientId: 'ALL',
      compromisedCredentialsRiskConfiguration: { actions: { eventAction: 'BLOCK' }, eventFilter: ['SIGN_IN', 'PASSWORD_CHANGE'] },
      // TOTP is asked of every sign-in anyway; a high-risk one is refused outright. No notification
      // mail: that needs SES, and the operator learns it at the sign-in page.
      accountTakeoverRiskConfiguration: {
        actions: {
          lowAction: { eventAction: 'MFA_REQUIRED', notify: false },
          mediumAction: { eventAction: 'MFA_REQUIRED', notify: false },
          highAction: { eventAction: 'BLOCK', notify: false },
        },
      },
    });

    this.groups = new Map(
      OPERATOR_ROLES.map((role) => [
        role,
        new cognito.UserPoolGroup(this, `Group-${role}`, {
          userPool: this.userPool,
          groupName: role,
          precedence: GROUP_PRECEDENCE[role],
          description: `Admin portal role ${role} (lib/operator-roles.ts)`,
        }),
      ]),
    );

    // Cognito's sign-in pages (the classic hosted UI): password, TOTP enrolment and codes, the first
    // password change, password reset.
    this.domain = this.userPool.addDomain('SignInPages', {
      cognitoDomain: { domainPrefix: props.domainPrefix },
      managedLoginVersion: cognito.ManagedLoginVersion.CLASSIC_HOSTED_UI,
    });

    this.client = this.userPool.addClient('AdminPortalClient', {
      userPoolClientName: 'admin-portal',
      // The sign-in pages use SRP; USER_PASSWORD_AUTH (the password sent to Cognito's API) is off.
      authFlows: { userSrp: true },
      // A public client: the portal is a page in the operator's browser, so it holds no secret and
      // proves the code is its own with PKCE (S256) instead.
      generateSecret: false,
      oAuth: {
        flows: { authorizationCodeGrant: true },
        scopes: [cognito.OAuthScope.OPENID],
        callbackUrls: [props.portalUrl],
        logoutUrls: [props.portalUrl],
      },
      supportedIdentityProviders: [cognito.UserPoolClientIdentityProvider.COGNITO],
      preventUserExistenceErrors: true,
      idTokenValidity: OPERATOR_SESSION,
      accessTokenValidity: OPERATOR_SESSION,
      // The portal keeps only the ID token; Cognito's shortest refresh token lifetime.
      refreshTokenValidity: OPERATOR_SESSION,
      enableTokenRevocation: true,
    });

    // Issuer https://cognito-idp.<region>.amazonaws.com/<pool id>, audience the client id (the ID token's `aud`).
    this.authorizer = new HttpUserPoolAuthorizer('OperatorAuthorizer', this.userPool, {
      userPoolClients: [this.client],
      authorizerName: 'operators',
    });
  }

  /** The sign-in pages' base URL, https://<prefix>.auth.<region>.amazoncognito.com. */
  get signInPagesUrl(): string {
    return this.domain.baseUrl();
  }

  /** What the admin portal page needs to send operators to the sign-in pages (lambdas/config.ts). */
  get portalEnvironment(): Record<string, string> {
    return { OPERATOR_SIGN_IN_URL: this.signInPagesUrl, OPERATOR_CLIENT_ID: this.client.userPoolClientId };
  }

  /**
   * Lets a function read the operators' sign-in events (the ImportSignIns job, ADR 0019): the pool's
   * users and each one's auth events, on this pool only, and tells it the pool.
   */
  grantSignInEvents(fn: lambda.Function): void {
    fn.addEnvironment('OPERATOR_POOL_ID', this.userPool.userPoolId);
    fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['cognito-idp:ListUsers', 'cognito-idp:AdminListUserAuthEvents'], resources: [this.userPool.userPoolArn] }));
  }
}
